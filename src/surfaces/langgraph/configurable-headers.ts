import type { IncomingHttpHeaders } from "node:http";
import type { AgentRunRequest } from "../../runs/agent/agent-run-config.js";

/** Never handed to a graph by default: keys. */
const KEPT_BACK = new Set(["x-api-key", "x-tenant-id", "x-service-key"]);

/** A header name pattern (`x-org-*`) as a test of a lower-case name: `*` is any run of characters, nothing else is special. */
function matcher(patterns: readonly string[]): (name: string) => boolean {
  const tests = patterns.map((pattern) => {
    const lower = pattern.toLowerCase();
    if (!lower.includes("*")) return (name: string) => name === lower;
    const expression = new RegExp(
      `^${lower
        .split("*")
        .map((part) => part.replace(/[.+^$|()[\]{}\\?]/gu, "\\$&"))
        .join(".*")}$`,
      "u",
    );
    return (name: string) => expression.test(name);
  });
  return (name) => tests.some((test) => test(name));
}

/**
 * Which request headers a run finds in `config.configurable` (langgraph.json's
 * `http.configurable_headers`): by default, as LangGraph's server, every `x-*` header but the
 * keys and `user-agent`; `includes` replaces that list, `excludes` wins over both.
 */
export function configurableHeaders(
  rule: { includes?: readonly string[]; excludes?: readonly string[] } = {},
): (run: AgentRunRequest, headers: IncomingHttpHeaders) => AgentRunRequest {
  const included =
    rule.includes === undefined
      ? (name: string) => (name.startsWith("x-") && !KEPT_BACK.has(name)) || name === "user-agent"
      : matcher(rule.includes);
  const excluded = matcher(rule.excludes ?? []);
  return (run, headers) => {
    const found: Record<string, string> = {};
    // Node gives header names in lower case.
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || !included(name) || excluded(name)) continue;
      found[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    if (Object.keys(found).length === 0) return run;
    // The headers win over the body's keys of the same name, as on LangGraph's server.
    return { ...run, config: { ...run.config, configurable: { ...run.config.configurable, ...found } } };
  };
}
