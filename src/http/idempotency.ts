import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { storeCall } from "../dialects/responses/stored-context.js";
import { IdempotencyKeyReusedError, InvalidRequestError, RunBusyError } from "../errors/catalogue.js";
import type { IdempotencyRecord } from "../store/conversation-store.js";
import type { ResponseObject } from "../wire/responses-response.js";
import { reattach } from "./background-routes.js";
import { type RunRouteOptions, requestScope } from "./run-request.js";

// An answer larger than this is not kept: a repeat of its request runs again.
const MAX_KEPT_BYTES = 1_048_576;
// How long a repeat waits for the first request's answer before it is told to retry.
const MAX_WAIT_MS = 120_000;
const POLL_MS = 50;

/** The body, with its object keys sorted: the same request hashes alike however its JSON was written. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

function bodyHash(body: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(body)) ?? "")
    .digest("hex");
}

/** The `Idempotency-Key` header: visible ASCII, 1 to 255 characters, or a 400 naming it. */
function keyOf(request: FastifyRequest): string | undefined {
  const value = request.headers["idempotency-key"];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[\x21-\x7e]{1,255}$/u.test(value)) {
    throw new InvalidRequestError("Idempotency-Key must be 1 to 255 visible ASCII characters.", { param: "Idempotency-Key" });
  }
  return value;
}

/** Whether a stream ended in an error: its answer is not kept, so a repeat runs again. */
function failedStream(text: string): boolean {
  return text.includes('\ndata: {"error"') || text.startsWith('data: {"error"') || text.includes("event: error\n");
}

/**
 * Copies what a reply writes, up to a bound, and says when the reply has ended: whether it
 * was answered whole (the client stayed, no error status or error frame) and with what.
 */
function capture(reply: FastifyReply, onEnd: (result: NonNullable<IdempotencyRecord["result"]> | undefined) => void): void {
  const raw = reply.raw;
  const parts: string[] = [];
  let size = 0;
  const keep = (chunk: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function" || size > MAX_KEPT_BYTES) return;
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    size += text.length;
    parts.push(text);
  };
  const write = raw.write;
  const end = raw.end;
  const writeHead = raw.writeHead;
  // A stream's headers go straight to writeHead, where getHeader() does not see them.
  let contentType: string | undefined;
  raw.writeHead = function (this: typeof raw, ...args: unknown[]) {
    const headers = args.find((arg) => typeof arg === "object" && arg !== null) as Record<string, unknown> | undefined;
    const type = headers?.["content-type"];
    if (typeof type === "string") contentType = type;
    return (writeHead as (...rest: unknown[]) => typeof raw).apply(this, args);
  } as typeof raw.writeHead;
  raw.write = function (this: typeof raw, chunk: unknown, ...rest: unknown[]) {
    keep(chunk);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof raw.write;
  raw.end = function (this: typeof raw, chunk?: unknown, ...rest: unknown[]) {
    keep(chunk);
    return (end as (...args: unknown[]) => typeof raw).call(this, chunk, ...rest);
  } as typeof raw.end;
  raw.once("close", () => {
    raw.write = write;
    raw.end = end;
    raw.writeHead = writeHead;
    const body = parts.join("");
    const whole = raw.writableFinished && raw.statusCode < 400 && size <= MAX_KEPT_BYTES && !failedStream(body);
    const type = contentType ?? String(raw.getHeader("content-type") ?? "application/json; charset=utf-8");
    onEnd(whole ? { status: raw.statusCode, contentType: type, body } : undefined);
  });
}

/**
 * `Idempotency-Key` on a run route: the first request with a key (in its tenant's scope)
 * runs, and its answer, as it was sent, is kept with the key; a repeat with the same body
 * waits for that answer and gets it again, and starts nothing. A key used with another body
 * is a 422. A first request that fails lets the key go, so a retry runs. For a background
 * response, a repeat gets the response as it stands now (or reattaches to its events).
 */
export function idempotent(
  request: FastifyRequest,
  reply: FastifyReply,
  options: RunRouteOptions,
  /** The surface's `api` label: keys of two surfaces never meet. */
  api: string,
  run: (queued: (response: ResponseObject) => Promise<void>) => Promise<unknown>,
): Promise<unknown> {
  const header = keyOf(request);
  // Most requests carry no key: nothing to look up, and no async step of its own.
  return header === undefined ? run(NOT_KEPT) : idempotentWithKey(request, reply, options, api, header, run);
}

/** A request without a key has nothing to settle when its background response is queued. */
const NOT_KEPT = async (): Promise<void> => {};

async function idempotentWithKey(
  request: FastifyRequest,
  reply: FastifyReply,
  options: RunRouteOptions,
  api: string,
  header: string,
  run: (queued: (response: ResponseObject) => Promise<void>) => Promise<unknown>,
): Promise<unknown> {
  const { store } = options.registry;
  const call = <T>(operation: () => Promise<T>) => storeCall(options.backendTimeoutMs, operation);
  const scope = await requestScope(request, options.checkpointScope);
  const key = `${api}:${header}`;
  const hash = bodyHash(request.body);
  const deadline = Date.now() + MAX_WAIT_MS;
  for (;;) {
    const held = await call(() => store.claimIdempotencyKey(scope, key, hash));
    if (held === undefined) break;
    if (held.bodyHash !== hash) throw new IdempotencyKeyReusedError();
    if (held.result !== undefined) return replay(request, reply, options, scope, held.result);
    // The first request is still running: wait for its answer (or for the key to be let go).
    let record: IdempotencyRecord | undefined = held;
    while (record !== undefined && record.result === undefined) {
      if (Date.now() > deadline || reply.raw.destroyed) {
        throw new RunBusyError("The request with this Idempotency-Key is still running; retry when it has finished.");
      }
      await sleep(POLL_MS);
      record = await call(() => store.getIdempotencyKey(scope, key));
    }
    if (record?.result !== undefined) return replay(request, reply, options, scope, record.result);
  }
  // A background response settles its key once it is queued: from then on a repeat gets it
  // (or reattaches to its events), whatever becomes of this request's own connection.
  let queuedResponse = false;
  capture(reply, (result) => {
    if (queuedResponse) return;
    const settle = result === undefined ? store.releaseIdempotencyKey(scope, key) : store.settleIdempotencyKey(scope, key, result);
    call(() => settle).catch((error: unknown) => request.log.warn({ err: error }, "could not keep the answer of an idempotent request"));
  });
  return run(async (response) => {
    const result = { status: 200, contentType: "application/json; charset=utf-8", body: JSON.stringify(response) };
    // The response is queued whatever happens here; a key not settled now settles when the request ends.
    queuedResponse = await call(() => store.settleIdempotencyKey(scope, key, result)).then(
      () => true,
      (error: unknown) => {
        request.log.warn({ err: error }, "could not keep the answer of an idempotent request");
        return false;
      },
    );
  });
}

/**
 * The first request's answer again. A background response as it stands now, or, when it was
 * streamed, its events from the first, following the live ones (a reattach).
 */
async function replay(
  request: FastifyRequest,
  reply: FastifyReply,
  options: RunRouteOptions,
  scope: string,
  result: NonNullable<IdempotencyRecord["result"]>,
) {
  if (result.contentType.startsWith("application/json")) {
    const body = JSON.parse(result.body) as { object?: string; background?: boolean; id?: string };
    if (body.object === "response" && body.background === true && typeof body.id === "string") {
      const id = body.id;
      const now = await storeCall(options.backendTimeoutMs, () => options.registry.store.getResponse(scope, id));
      if (now !== undefined) {
        if ((request.body as { stream?: unknown }).stream === true)
          return reattach(reply, options, now.response as unknown as ResponseObject, -1);
        return reply.code(result.status).send(now.response);
      }
    }
  }
  return reply.code(result.status).type(result.contentType).send(result.body);
}
