import type { WebhookTarget } from "../background/webhooks.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import type { LangGraphBindSettings } from "../surfaces/langgraph/langgraph-surface.js";
import type { McpBindSettings } from "../surfaces/mcp/mcp-surface.js";
import { didYouMean } from "../util/did-you-mean.js";

/** Where `ChatServe#bind()` mounts the service and which surfaces it serves. */
export interface BindOptions {
  /** URL prefix, default `SVC_CHAT_API_PREFIX` or `/v1`. */
  prefix?: string;
  /** Serve `/docs`, `/redoc`, `/openapi.json`; default `SVC_CHAT_API_DOCS_ENABLED` or false. */
  docs?: boolean;
  /** Serve the playground page at `{prefix}/playground`; default false. */
  playground?: boolean;
  /**
   * Serve every model as an MCP tool at `{prefix}/mcp` (Streamable HTTP); default false.
   * `sessions: false` keeps no sessions (several processes behind one address; no
   * elicitation); `loopbackOnly` refuses Host headers that are not localhost.
   */
  mcp?: boolean | McpBindSettings;
  /**
   * Serve every model as an A2A agent under `{prefix}/a2a` (its card, and its JSON-RPC
   * endpoint); default false. Tasks are background responses: it needs background runs.
   */
  a2a?: boolean;
  /**
   * Serve every model to the AI SDK's `useChat` at `{prefix}/ai-sdk/{model}` (the UI message
   * stream; docs/ai-sdk.md); default false.
   */
  aiSdk?: boolean;
  /** Serve every model as an AG-UI 1.0 agent at `{prefix}/ag-ui/{model}` (docs/ag-ui.md); default false. */
  agUi?: boolean;
  /**
   * Serve the Anthropic Messages API at `{prefix}/messages` (and `/messages/count_tokens`), for
   * Claude Code and the Anthropic SDKs (docs/anthropic.md); default false.
   */
  anthropic?: boolean;
  /**
   * Serve the LangGraph Agent Protocol (assistants, threads, runs, store) at the server root,
   * or under `prefix`, for `@langchain/langgraph-sdk`, `useStream` and `RemoteGraph`
   * (docs/langgraph.md); default false.
   */
  langgraph?: boolean | LangGraphBindSettings;
  /**
   * The same models for chat UIs (Open WebUI and the like) under a second prefix, in the
   * `chat-ui` profile. `answerTasks` (default true) answers the UI's own title and tag
   * prompts without running the graph.
   */
  profiles?: { "chat-ui"?: { prefix: string; answerTasks?: boolean } };
}

/**
 * What the constructor checks of its options, each mistake one line naming its key: models an
 * API key or a per-model limit names must be registered, webhooks need an http(s) URL and a secret.
 */
export function checkOptions(
  registry: GraphRegistry,
  options: { webhooks?: readonly WebhookTarget[] | undefined },
  keyModels: readonly string[],
  limitModels: readonly string[],
): void {
  const known = registry.getGraphNames();
  const unknown = (named: readonly string[], where: (model: string) => string) => {
    const model = named.find((name) => !known.includes(name));
    if (model !== undefined) throw new TypeError(`${where(model)}${didYouMean(model, known)}`);
  };
  unknown(keyModels, (model) => `auth: an API key names the model '${model}', which is not registered`);
  unknown(limitModels, (model) => `limits.perModel: '${model}' is not a registered model`);
  (options.webhooks ?? []).forEach((target, index) => {
    if (!/^https?:\/\//u.test(String(target?.url)) || !URL.canParse(String(target.url))) {
      throw new TypeError(`webhooks.${index}.url: must be an http(s) URL`);
    }
    if (typeof target.secret !== "string" || target.secret === "") throw new TypeError(`webhooks.${index}.secret: is required`);
    if (target.timeoutMs !== undefined && !(Number.isFinite(target.timeoutMs) && target.timeoutMs > 0)) {
      throw new TypeError(`webhooks.${index}.timeoutMs: must be a number of milliseconds above 0`);
    }
  });
}
