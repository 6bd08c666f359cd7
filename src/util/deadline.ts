import { DeadlineExceededError } from "../errors/catalogue.js";

/** The default deadline of a backend call (`backendTimeoutMs`). */
export const DEFAULT_BACKEND_TIMEOUT_MS = 2_000;

/**
 * Settles with the operation, or rejects with `DeadlineExceededError` once `timeoutMs` has
 * passed, whichever comes first (`Infinity`: no deadline, no timer). The timer is cleared on both paths. The operation itself
 * is not cancelled: callers whose backend can be cancelled (a pg query_timeout, an ioredis
 * commandTimeout) set that too, so nothing keeps waiting behind the deadline.
 */
export async function withDeadline<T>(what: string, timeoutMs: number, operation: Promise<T>): Promise<T> {
  // No deadline: a store in this process's memory cannot hang, and a timer per call is not free.
  if (timeoutMs === Number.POSITIVE_INFINITY) return operation;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([operation, expired]);
  } finally {
    clearTimeout(timer);
  }
}
