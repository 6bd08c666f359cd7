import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,128}$/u;

/** Every value the client sent for a header, before Node joins duplicates with commas. */
function headerValues(request: FastifyRequest, name: string): string[] {
  const raw = request.raw.rawHeaders;
  if (Array.isArray(raw) && raw.length > 0) {
    const values: string[] = [];
    for (let index = 0; index + 1 < raw.length; index += 2) {
      if (raw[index]?.toLowerCase() === name) values.push(raw[index + 1] ?? "");
    }
    return values;
  }
  const value = request.headers[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Keeps a single incoming `x-request-id` of 1–128 printable ASCII characters, else makes one. */
export function resolveRequestId(request: FastifyRequest): string {
  const values = headerValues(request, "x-request-id");
  const [value] = values;
  if (values.length === 1 && value !== undefined && PRINTABLE_ASCII.test(value)) return value;
  return randomUUID();
}
