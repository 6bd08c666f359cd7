import { randomFillSync } from "node:crypto";

// Random bytes drawn in batches from the system's CSPRNG (as randomUUID does), so one ID costs
// a slice of a buffer rather than a call into it: every response and chunk stream names itself.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let next = POOL_BYTES;

/** `length` random lowercase hex characters (a multiple of two up to 8,192; 32 is a UUID's worth). */
export function randomHex(length = 32): string {
  const bytes = Math.ceil(length / 2);
  if (next + bytes > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  const hex = pool.toString("hex", next, next + bytes);
  next += bytes;
  return hex.length === length ? hex : hex.slice(0, length);
}
