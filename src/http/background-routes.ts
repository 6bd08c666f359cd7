import type { FastifyReply, FastifyRequest } from "fastify";
import type { ParsedResponsesRequest } from "../dialects/responses/parse-responses-request.js";
import { InvalidRequestError, UnsupportedParameterError } from "../errors/catalogue.js";
import { toServeError } from "../errors/to-serve-error.js";
import type { ResponseObject } from "../wire/responses-response.js";
import { errorBody } from "./error-mapper.js";
import { type RunRouteOptions, requestScope, sharesAgentStore } from "./run-request.js";
import { writeSse } from "./sse-writer.js";

/** The statuses a response ends in. */
export const TERMINAL: ReadonlySet<string> = new Set(["completed", "incomplete", "failed", "cancelled"]);

/** `starting_after`: a sequence number (an integer from -1), or absent (-1: every event). */
export function startingAfter(value: unknown): number {
  if (value === undefined) return -1;
  const text = String(value);
  if (!/^-?\d{1,9}$/u.test(text) || Number(text) < -1) {
    throw new InvalidRequestError("starting_after must be the sequence number of an event (an integer, -1 or more).", {
      param: "starting_after",
    });
  }
  return Number(text);
}

/** Follows a background response's events until it ends; the client leaving stops only its own stream. */
async function follow(reply: FastifyReply, options: RunRouteOptions, responseId: string, after: number) {
  const left = new AbortController();
  const onClose = () => left.abort();
  reply.raw.on("close", onClose);
  try {
    const from = await options.background!.events(responseId, after, left.signal);
    if (from.kind === "unknown") {
      throw new InvalidRequestError(
        "This response's events are not kept: it was not streamed (create it with stream: true), or it ended too long ago; retrieve it without stream.",
        { param: "stream" },
      );
    }
    if (from.kind === "past-end") {
      throw new InvalidRequestError(`starting_after: the response ended with event ${from.last}; there is nothing after ${after}.`, {
        param: "starting_after",
      });
    }
    await writeSse(reply, from.events, {
      keepAliveMs: options.keepAliveMs,
      stalledClientMs: options.stalledClientMs,
      typedEvents: true,
      errorFrame: (error) => errorBody(toServeError(error)),
    });
    return reply;
  } finally {
    reply.raw.off("close", onClose);
  }
}

/**
 * `POST /responses` with `background: true`: queued at once (the response comes back
 * `queued`), run by a worker. With `stream: true`, the events follow as they happen; the
 * client may leave and reattach, and leaving never cancels the run.
 */
export async function submitBackground(
  request: FastifyRequest,
  reply: FastifyReply,
  options: RunRouteOptions,
  parsed: ParsedResponsesRequest,
  /** Told once the response is queued (an idempotency key settles then). */
  queued: (response: ResponseObject) => Promise<void>,
) {
  if (options.background === undefined) {
    throw new UnsupportedParameterError(options.backgroundUnavailable ?? "background responses are not served here.", {
      param: "background",
    });
  }
  // A submission counts against the request rate like any run; the queue's concurrency, not a
  // request's concurrent-run slot, bounds how many run at once.
  const admission = await options.limits?.admit(request, reply, parsed.body.model);
  await admission?.();
  const submitted = await options.background.submit(parsed, {
    scope: await requestScope(request, options.checkpointScope),
    ...(request.chatServeCaller?.tenant === undefined ? {} : { tenant: request.chatServeCaller.tenant }),
    ...(request.chatServeCaller?.authUser === undefined ? {} : { authUser: request.chatServeCaller.authUser }),
    ...(sharesAgentStore(request, options.checkpointScope) ? { storeScope: "default" } : {}),
    requestId: request.chatServeRequestId,
    body: request.body as Record<string, unknown>,
  });
  await queued(submitted.response);
  if (parsed.body.stream !== true) return submitted.response;
  return follow(reply, options, submitted.response.id, -1);
}

/** `GET /responses/{id}?stream=true&starting_after=N`: a background response's events again, from N + 1. */
export async function reattach(reply: FastifyReply, options: RunRouteOptions, response: ResponseObject, after: number) {
  if (response.background !== true || options.background === undefined) {
    throw new InvalidRequestError("Only background responses can be streamed again; retrieve this one without stream.", {
      param: "stream",
    });
  }
  return follow(reply, options, response.id, after);
}
