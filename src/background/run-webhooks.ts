import type { AddressInfo } from "node:net";
import { type ResolveHost, refusedHost, refusedOnceResolved, resolveWithDns } from "./webhook-addresses.js";
import { type RunWebhookPolicy, WebhookSender, type WebhookSenderOptions } from "./webhooks.js";

export type { RunWebhookPolicy } from "./webhooks.js";

import { AgentInvalidBodyError } from "../errors/catalogue.js";
import { protocolJson } from "../runs/agent/agent-graph.js";
import type { AgentRunRecord } from "../store/agent-records.js";
import { fillEnvTemplates } from "../util/env-template.js";

function refuse(reason: string): never {
  throw new AgentInvalidBodyError(`webhook: ${reason}.`);
}

/** How long a run's creation waits for its webhook's host to resolve before leaving the check to the delivery. */
const RESOLVE_DEADLINE_MS = 2_000;

/**
 * Checks a run's `webhook` against the policy; the client's 422, naming the field, when it breaks
 * a rule. Whatever the rules, no cloud metadata service: not by name, not by any spelling of its
 * address, not by a name that resolves to it (checked again at each delivery).
 */
export async function checkRunWebhook(
  url: string,
  policy: RunWebhookPolicy,
  disabled: boolean,
  resolve: ResolveHost = resolveWithDns,
): Promise<void> {
  if (disabled) refuse("run webhooks are turned off on this server (http.disable_webhooks)");
  const max = policy.maxUrlLength ?? 4096;
  if (url.length > max) refuse(`is longer than ${max} characters`);
  if (url.startsWith("/")) {
    if (policy.disableLoopback === true) refuse("paths on this server (loopback calls) are turned off here; give an absolute https:// URL");
    return;
  }
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    refuse("must be an absolute http(s) URL, or a path on this server starting with /");
  }
  if (policy.requireHttps === true && parsed.protocol !== "https:") refuse("must use https:// here");
  const named = refusedHost(parsed.hostname);
  if (named !== undefined) refuse(`${named}, which no webhook may reach`);
  const domains = policy.allowedDomains ?? [];
  const host = parsed.hostname.toLowerCase();
  const allowed = domains.some((domain) => {
    const lower = domain.toLowerCase();
    return lower.startsWith("*.") ? host.endsWith(lower.slice(1)) : host === lower;
  });
  if (domains.length > 0 && !allowed) refuse(`the host ${host} is not among the allowed domains`);
  const port = Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80));
  if (policy.allowedPorts !== undefined && policy.allowedPorts.length > 0 && !policy.allowedPorts.includes(port)) {
    refuse(`port ${port} is not among the allowed ports`);
  }
  const refused = await refusedOnceResolved(parsed.hostname, resolve, RESOLVE_DEADLINE_MS);
  if (refused !== undefined) refuse(`${refused}, which no webhook may reach`);
}

/**
 * Sends each run that asked for it (`webhook`) to its URL when it ends, as LangGraph's server
 * does: the run, its status, when it ended and was sent, the thread's values or the error;
 * with the retries and deadline of every webhook chat-serve sends. A path is POSTed to this
 * server itself (a project's own routes).
 */
export class RunWebhooks {
  readonly #sender: WebhookSender;
  readonly #policy: RunWebhookPolicy;
  readonly #address: () => AddressInfo | string | null;

  constructor(
    policy: RunWebhookPolicy,
    address: () => AddressInfo | string | null,
    log?: WebhookSenderOptions["log"],
    resolve?: ResolveHost,
  ) {
    this.#policy = policy;
    this.#address = address;
    // A path on this server is a loopback call; any other URL is the client's and guarded.
    this.#sender = new WebhookSender([], {
      ...(log === undefined ? {} : { log }),
      ...(resolve === undefined ? {} : { resolve }),
      guard: true,
    });
  }

  /** The run that ended, to its webhook. */
  send(url: string, run: AgentRunRecord, result: unknown, startedAt = run.created_at): void {
    const { scope: _scope, temporary: _temporary, checkpoint_before: _before, ...shown } = run;
    const failed = (result as { __error__?: { message?: string } } | undefined)?.__error__;
    // Messages as the protocol writes them (`{ type, content, … }`), as every answer of the surface.
    const body = protocolJson({
      ...shown,
      run_started_at: startedAt,
      run_ended_at: run.updated_at,
      webhook_sent_at: new Date().toISOString(),
      ...(failed === undefined ? { values: result ?? null } : { error: failed.message ?? "The run failed." }),
    });
    const headers = Object.fromEntries(Object.entries(this.#policy.headers ?? {}).map(([name, value]) => [name, fillEnvTemplates(value)]));
    // The run's id is the delivery's: the same on every retry, and from whichever process ends it.
    const secret = this.#policy.secret;
    this.#sender.post({ url: this.#resolve(url), headers, ...(secret === undefined ? {} : { secret }) }, body, run.run_id);
  }

  /** A path on this server as a URL of its own listening address. */
  #resolve(url: string): string {
    if (!url.startsWith("/")) return url;
    const address = this.#address();
    if (address === null || typeof address === "string") return `http://127.0.0.1${url}`;
    const host = address.address === "::" || address.address === "0.0.0.0" ? "127.0.0.1" : address.address;
    return `http://${address.family === "IPv6" && host !== "127.0.0.1" ? `[${host}]` : host}:${address.port}${url}`;
  }

  /** Deliveries still waiting (for the tests that count what is left). */
  get pending(): number {
    return this.#sender.pending;
  }

  /** Drops the retries still waiting and the requests in flight. */
  close(): void {
    this.#sender.close();
  }
}
