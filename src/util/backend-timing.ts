import diagnosticsChannel from "node:diagnostics_channel";

/** One backend call's duration: a lease taken, a checkpoint read or written. */
export interface BackendTiming {
  backend: "lease" | "checkpointer";
  operation: string;
  seconds: number;
}

/**
 * Backend call durations, published on a diagnostics channel for whoever listens (the
 * metrics, when on). With no subscriber nothing is measured.
 */
export const backendTimingChannel = diagnosticsChannel.channel("chat-serve:backend-timing");

/** Runs `call`, publishing how long it took (whether it succeeded or not). */
export async function timed<T>(backend: BackendTiming["backend"], operation: string, call: () => Promise<T>): Promise<T> {
  if (!backendTimingChannel.hasSubscribers) return call();
  const started = performance.now();
  try {
    return await call();
  } finally {
    backendTimingChannel.publish({ backend, operation, seconds: (performance.now() - started) / 1000 } satisfies BackendTiming);
  }
}
