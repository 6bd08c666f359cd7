import { createHook } from "node:async_hooks";

/**
 * Counts the live async resources of some types (a `Timeout` counts from creation until it
 * is cleared or has fired for the last time), unref'd ones included, which
 * `process.getActiveResourcesInfo()` leaves out.
 */
export function trackLiveResources(types: readonly string[]): { count: () => number; stop: () => void } {
  const live = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (types.includes(type)) live.add(asyncId);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  hook.enable();
  return { count: () => live.size, stop: () => hook.disable() };
}
