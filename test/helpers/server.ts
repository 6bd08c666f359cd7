import type { FastifyInstance } from "fastify";
import { type BindOptions, ChatServe, type ChatServeOptions } from "../../src/app/chat-serve.js";
import type { GraphConfigInput } from "../../src/registry/graph-config.js";
import { GraphRegistry, type GraphRegistryOptions } from "../../src/registry/graph-registry.js";

export interface TestServer {
  serve: ChatServe;
  app: FastifyInstance;
  /** `http://127.0.0.1:PORT/v1`, the base URL for the openai client. */
  baseURL: string;
  origin: string;
  close: () => Promise<void>;
}

/** Builds a ChatServe for the given graphs and listens on a free loopback port. */
export async function startTestServer(
  graphs: Record<string, GraphConfigInput>,
  options: Omit<ChatServeOptions, "graphs"> & BindOptions = {},
  registryOptions?: GraphRegistryOptions,
): Promise<TestServer> {
  const { prefix = "/v1", docs, playground, profiles, mcp, a2a, aiSdk, agUi, anthropic, langgraph, ...rest } = options;
  const serve = new ChatServe({ graphs: new GraphRegistry(graphs, registryOptions), ...rest });
  const app = await serve.bind({ prefix, docs, playground, profiles, mcp, a2a, aiSdk, agUi, anthropic, langgraph });
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  return { serve, app, origin, baseURL: `${origin}${prefix}`, close: () => app.close() };
}

/** Builds the app without listening, for `inject()`. */
export async function buildTestApp(
  graphs: Record<string, GraphConfigInput>,
  options: Omit<ChatServeOptions, "graphs"> & BindOptions = {},
): Promise<{ serve: ChatServe; app: FastifyInstance }> {
  const { prefix = "/v1", docs, playground, langgraph, ...rest } = options;
  const serve = new ChatServe({ graphs: new GraphRegistry(graphs), ...rest });
  const app = await serve.bind({ prefix, docs, playground, langgraph });
  await app.ready();
  return { serve, app };
}

/** Reads an SSE response body into its `data:` payloads (JSON parsed, `[DONE]` kept as text). */
export function parseSse(body: string): unknown[] {
  return body
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice("data: ".length))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

/** Two tenants' keys, for tests that show each sees only its own. */
export const TWO_TENANTS = {
  a: "tenant-a-key-0123456789",
  b: "tenant-b-key-0123456789",
  auth: {
    keys: [
      { key: "tenant-a-key-0123456789", tenant: "a" },
      { key: "tenant-b-key-0123456789", tenant: "b" },
    ],
  },
};
