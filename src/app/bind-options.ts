import type { WebhookTarget } from "../background/webhooks.js";
import type { GraphRegistry } from "../registry/graph-registry.js";
import { didYouMean } from "../util/did-you-mean.js";
import type { SwitchOptions } from "./surfaces.js";

/**
 * Where `ChatServe#bind()` mounts the service and which surfaces it serves: one option per
 * surface with a switch (`docs`, `playground`, `mcp`, `a2a`, `aiSdk`, `agUi`, `anthropic`,
 * `langgraph`: `true`, `false` or the surface's settings; each off unless given, `docs` on
 * with `SVC_CHAT_API_DOCS_ENABLED`), as the list of surfaces declares them.
 */
export interface BindOptions extends SwitchOptions {
  /** URL prefix, default `SVC_CHAT_API_PREFIX` or `/v1`. */
  prefix?: string;
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
