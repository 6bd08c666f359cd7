import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,128}$/u;

/** Keeps a single incoming `x-request-id` of 1–128 printable ASCII characters, else makes one. */
export function resolveRequestId(request: FastifyRequest): string {
  const values = request.raw.headersDistinct["x-request-id"];
  if (values?.length === 1) {
    const [value] = values;
    if (value !== undefined && PRINTABLE_ASCII.test(value)) return value;
  }
  return randomUUID();
}
