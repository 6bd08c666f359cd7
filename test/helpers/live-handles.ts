import { createHook } from "node:async_hooks";

/**
 * Counts the live async resources of some types (a `Timeout` counts from creation until it
 * is cleared or has fired for the last time), unref'd ones included, which
 * `process.getActiveResourcesInfo()` leaves out. `createdBy` counts only those created through
 * code whose stack matches (a file or package name); `created` counts every one seen, ended or not.
 */
export function trackLiveResources(
  types: readonly string[],
  options: { createdBy?: RegExp } = {},
): { count: () => number; created: () => number; stop: () => void } {
  const live = new Set<number>();
  let created = 0;
  const { createdBy } = options;
  const hook = createHook({
    init(asyncId, type) {
      if (!types.includes(type)) return;
      // Only resources whose creation passed through matching code (the server's, not the test client's).
      if (createdBy !== undefined && !createdBy.test(new Error().stack ?? "")) return;
      live.add(asyncId);
      created += 1;
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  hook.enable();
  return { count: () => live.size, created: () => created, stop: () => hook.disable() };
}
