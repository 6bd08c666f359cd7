import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { FastifyRequest } from "fastify";

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,128}$/u;

/** Every value the client sent for a header, before Node joins duplicates with commas (or the one a host set). */
function headerValues(request: Pick<IncomingMessage, "rawHeaders" | "headers">, name: string): string[] {
  const raw = request.rawHeaders;
  if (Array.isArray(raw) && raw.length > 0) {
    const values: string[] = [];
    for (let index = 0; index + 1 < raw.length; index += 2) {
      if (raw[index]?.toLowerCase() === name) values.push(raw[index + 1] ?? "");
    }
    // None on the wire: a host's middleware may have set it (Express, before the mount).
    if (values.length > 0) return values;
  }
  const value = request.headers[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * Keeps a single incoming `x-request-id` of 1–128 printable ASCII characters, else makes one.
 * Takes the raw request, so it can be fastify's `genReqId`.
 */
export function requestIdOf(raw: Pick<IncomingMessage, "rawHeaders" | "headers">): string {
  // Most requests send none: the raw headers are read only when one came.
  if (raw.headers["x-request-id"] === undefined) return randomUUID();
  const values = headerValues(raw, "x-request-id");
  const [value] = values;
  if (values.length === 1 && value !== undefined && PRINTABLE_ASCII.test(value)) return value;
  return randomUUID();
}

/** The request ID of a fastify request (see `requestIdOf`). */
export function resolveRequestId(request: FastifyRequest): string {
  return requestIdOf(request.raw);
}
