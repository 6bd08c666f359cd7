import { createHmac } from "node:crypto";
import { randomHex } from "../util/random-hex.js";
import type { ResolveHost } from "./webhook-addresses.js";
import { postWebhook, WebhookDestinationRefused } from "./webhook-post.js";

/** The webhook events a background response sends when it ends, as OpenAI names them. */
export const WEBHOOK_EVENTS = ["response.completed", "response.failed", "response.cancelled", "response.incomplete"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** One endpoint that hears when background responses end. */
export interface WebhookTarget {
  /** An http(s) URL. */
  url: string;
  /**
   * The signing secret: `whsec_` followed by base64 (as OpenAI's dashboard gives them), or any
   * other string, used as it is. The `openai` SDK's `webhooks.unwrap()` verifies either.
   */
  secret: string;
  /** The events it wants (default: all four). */
  events?: readonly WebhookEventType[];
  /** How long one attempt waits for the receiver's answer (default: the sender's `timeoutMs`, 10 s). */
  timeoutMs?: number;
}

/**
 * What run webhooks may call, and what they carry (langgraph.json's `webhooks`): `requireHttps`,
 * `allowedDomains` (exact hosts, or `*.example.com` for its subdomains), `allowedPorts`,
 * `maxUrlLength` (default 4096), `disableLoopback` (no paths on this server), and `headers`
 * sent with every delivery, whose `${{ env.NAME }}` templates read variables named with
 * `envPrefix` (default `LG_WEBHOOK_`; checked at start).
 */
export interface RunWebhookPolicy {
  requireHttps?: boolean;
  allowedDomains?: string[];
  allowedPorts?: number[];
  maxUrlLength?: number;
  disableLoopback?: boolean;
  headers?: Record<string, string>;
  envPrefix?: string;
  /**
   * Signs each delivery as Standard Webhooks do (`webhook-signature: v1,<base64 HMAC-SHA256>`);
   * `whsec_` + base64, or any other string used as it is. Without it, deliveries carry
   * `webhook-id` and `webhook-timestamp` unsigned.
   */
  secret?: string;
}

/** Where one delivery goes: a URL, signed when there is a secret, with headers of its own. */
interface DeliveryTarget {
  url: string;
  secret?: string;
  timeoutMs?: number;
  headers?: Readonly<Record<string, string>>;
}

/**
 * What one attempt was: `delivered` (a 2xx), `rejected` (another status), `timed_out` (no answer
 * in time: the receiver may still have handled it) or `unreachable` (no connection).
 */
export type WebhookAttemptOutcome = "delivered" | "rejected" | "timed_out" | "unreachable";

export interface WebhookSenderOptions {
  /** Tries per delivery before giving up (default 6: at once, then after 1, 2, 4, 8 and 16 s). */
  attempts?: number;
  /** The wait before the first retry; each next one doubles (default 1 s). */
  firstRetryMs?: number;
  /** Deadline of one POST when its target sets none (default 10 s). */
  timeoutMs?: number;
  log?: {
    warn(object: Record<string, unknown>, message: string): void;
    error(object: Record<string, unknown>, message: string): void;
  };
  /** Counts deliveries and failures, when metrics are on. */
  observe?: (outcome: "delivered" | "failed") => void;
  /** Counts each attempt by what it was, when metrics are on. */
  observeAttempt?: (outcome: WebhookAttemptOutcome) => void;
  /**
   * Refuses cloud metadata services however they are named or resolve (for URLs clients give:
   * a run's `webhook`). Default false: the operator's own configured URLs go where they say.
   */
  guard?: boolean;
  /** How hosts resolve when `guard` is on (default: the system's resolver, `dns.lookup`). */
  resolve?: ResolveHost;
}

function signingKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice("whsec_".length), "base64") : Buffer.from(secret, "utf8");
}

/**
 * A delivery's Standard Webhooks (and so OpenAI) headers: `webhook-id` (the same on every retry),
 * `webhook-timestamp` (this attempt's), and with a secret `webhook-signature: v1,<base64>`, an
 * HMAC-SHA256 over `{id}.{timestamp}.{body}`.
 */
function deliveryHeaders(secret: string | undefined, id: string, timestamp: number, body: string): Record<string, string> {
  const headers: Record<string, string> = { "webhook-id": id, "webhook-timestamp": String(timestamp) };
  if (secret === undefined) return headers;
  const signature = createHmac("sha256", signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return { ...headers, "webhook-signature": `v1,${signature}` };
}

/**
 * Delivers webhook events: each POST signed, retried with doubling waits until the endpoint
 * answers 2xx (at least once, possibly more: a receiver deduplicates by `webhook-id`). Every
 * retry timer and request belongs to the sender, and `close()` ends them.
 */
export class WebhookSender {
  readonly #targets: readonly WebhookTarget[];
  readonly #options: Required<Omit<WebhookSenderOptions, "log" | "observe" | "observeAttempt" | "resolve">> &
    Pick<WebhookSenderOptions, "log" | "observe" | "observeAttempt" | "resolve">;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inFlight = new Set<AbortController>();
  #closed = false;

  constructor(targets: readonly WebhookTarget[], options: WebhookSenderOptions = {}) {
    this.#targets = targets;
    this.#options = {
      attempts: options.attempts ?? 6,
      firstRetryMs: options.firstRetryMs ?? 1_000,
      timeoutMs: options.timeoutMs ?? 10_000,
      guard: options.guard ?? false,
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(options.observe === undefined ? {} : { observe: options.observe }),
      ...(options.observeAttempt === undefined ? {} : { observeAttempt: options.observeAttempt }),
    };
  }

  /** Sends the event that a response ended, to every target that wants it. */
  responseEnded(type: WebhookEventType, responseId: string): void {
    if (this.#closed) return;
    const event = {
      id: `evt_${randomHex()}`,
      object: "event",
      created_at: Math.floor(Date.now() / 1000),
      type,
      data: { id: responseId },
    };
    const body = JSON.stringify(event);
    for (const target of this.#targets) {
      if (target.events !== undefined && !target.events.includes(type)) continue;
      void this.#attempt(target, event.id, body, 1);
    }
  }

  /**
   * POSTs one body to one URL (an Agent Protocol run's `webhook`), with the same retries,
   * deadline and ownership as every delivery: signed when the target has a secret, with its
   * own headers beside `content-type`.
   */
  post(target: DeliveryTarget, body: string, id = `evt_${randomHex()}`): void {
    if (this.#closed) return;
    void this.#attempt(target, id, body, 1);
  }

  async #attempt(target: DeliveryTarget, id: string, body: string, attempt: number): Promise<void> {
    if (this.#closed) return;
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timeoutMs = target.timeoutMs ?? this.#options.timeoutMs;
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let failure: string;
    let outcome: WebhookAttemptOutcome;
    /** A failure that another attempt cannot mend: a refused destination, a redirect. */
    let final = false;
    try {
      // Signed at each attempt: the timestamp is when it was sent.
      const signed = deliveryHeaders(target.secret, id, Math.floor(Date.now() / 1000), body);
      const headers = { ...target.headers, "content-type": "application/json", ...signed };
      const { guard, resolve } = this.#options;
      const status = await postWebhook(target.url, {
        headers,
        body,
        signal: controller.signal,
        guard,
        ...(resolve === undefined ? {} : { resolve }),
      });
      if (status >= 200 && status < 300) {
        this.#options.observeAttempt?.("delivered");
        this.#options.observe?.("delivered");
        return;
      }
      outcome = "rejected";
      final = status >= 300 && status < 400;
      failure = final ? `answered ${status}: redirects are not followed, give the webhook's final URL` : `answered ${status}`;
    } catch (error) {
      final = error instanceof WebhookDestinationRefused;
      outcome = final ? "rejected" : controller.signal.aborted ? "timed_out" : "unreachable";
      failure =
        outcome === "timed_out"
          ? `no answer within ${timeoutMs} ms (the receiver may have handled it: it is sent again with the same webhook-id; raise this webhook's timeout if it needs longer)`
          : String((error as Error).message);
    } finally {
      clearTimeout(timer);
      this.#inFlight.delete(controller);
    }
    if (this.#closed) return;
    this.#options.observeAttempt?.(outcome);
    if (this.#closed) return;
    if (attempt >= this.#options.attempts || final) {
      this.#options.observe?.("failed");
      this.#options.log?.error(
        { url: target.url, event: id, attempts: attempt, outcome, reason: failure },
        "a webhook could not be delivered; giving up",
      );
      return;
    }
    const wait = this.#options.firstRetryMs * 2 ** (attempt - 1);
    this.#options.log?.warn(
      { url: target.url, event: id, attempt, outcome, reason: failure, retryInMs: wait },
      "a webhook delivery failed; retrying",
    );
    const retry = setTimeout(() => {
      this.#timers.delete(retry);
      void this.#attempt(target, id, body, attempt + 1);
    }, wait);
    this.#timers.add(retry);
  }

  /** Stops: pending retries are dropped, requests in flight aborted. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const controller of this.#inFlight) controller.abort();
  }

  /** Deliveries still waiting for a retry or an answer (for tests that count what is left). */
  get pending(): number {
    return this.#timers.size + this.#inFlight.size;
  }
}
