import type { AgentCard } from "@a2a-js/sdk";
import { type GraphFeature, wireFeatureName } from "../../registry/features.js";

/** The A2A protocol version this server speaks (that of `@a2a-js/sdk`), and the older one it also answers. */
export const A2A_VERSIONS = ["1.0", "0.3"] as const;

const MODES = ["text/plain", "application/json"];

/** What an agent card says of one model. */
export interface CardOf {
  model: string;
  description: string;
  features: ReadonlySet<GraphFeature>;
  /** The model's JSON-RPC endpoint, absolute. */
  url: string;
  /** The server asks for an API key (a Bearer token). */
  auth: boolean;
  version: string;
}

/**
 * A model's agent card: one skill (the model, described as it is), streaming, no push
 * notifications, the JSON-RPC endpoint for both protocol versions, and the API keys as a
 * Bearer scheme when the server has some.
 */
export function agentCard(card: CardOf): AgentCard {
  return {
    name: card.model,
    description: card.description,
    supportedInterfaces: A2A_VERSIONS.map((protocolVersion) => ({
      url: card.url,
      protocolBinding: "JSONRPC",
      tenant: "",
      protocolVersion,
    })),
    provider: undefined,
    version: card.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: card.auth
      ? {
          bearer: {
            scheme: {
              $case: "httpAuthSecurityScheme",
              value: { scheme: "Bearer", bearerFormat: "", description: "An API key of this server, as a Bearer token." },
            },
          },
        }
      : {},
    securityRequirements: card.auth ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [
      {
        id: card.model,
        name: card.model,
        description: card.description,
        tags: ["chat-serve", ...[...card.features].map(wireFeatureName)],
        examples: [],
        inputModes: MODES,
        outputModes: MODES,
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
