import type { FastifyInstance } from "fastify";
import type { SurfaceContext } from "../../http/surface.js";
import { backendCall } from "../../runs/agent/agent-run-config.js";
import type { CronScheduler } from "../../runs/agent/cron-scheduler.js";
import type { CronRecord } from "../../store/cron-records.js";

/**
 * The crons' scheduler of a server, made when it is first needed: at start when the records
 * hold enabled crons and there is no shared queue (their timers are this process's), at a
 * firing the shared queue gives this process, or with the engine. Its runs are the engine's
 * (`fire`, which loads it). The server's close stops its timers.
 */
export function wireCrons(
  app: FastifyInstance,
  context: SurfaceContext,
  fire: () => Promise<(cron: CronRecord) => Promise<void>>,
): () => Promise<CronScheduler> {
  const records = context.registry.store.cronRecords;
  const queue = context.background?.sharedAgentRuns?.queue;
  let made: Promise<CronScheduler> | undefined;
  const scheduler = () =>
    (made ??= import("../../runs/agent/cron-scheduler.js").then(
      ({ CronScheduler }) =>
        new CronScheduler({
          records,
          fire: async (cron) => (await fire())(cron),
          ...(queue === undefined ? {} : { queue }),
          log: app.log,
          timeoutMs: context.backendTimeoutMs,
          countSkipped: (reason, firings) => context.metrics?.cronFired(reason === "busy" ? "skipped" : "missed", firings),
          // A firing is one process's, whatever the number on this store: the first to mark it in the records.
          claim: (cron, due) =>
            backendCall("the cron records", context.backendTimeoutMs, () => records.claimFiring(cron.scope, cron.cron_id, due)),
        }),
    ));
  // A firing of the shared queue: the cron's run, made here.
  context.background?.handleAgentCrons(async (job, due) => (await scheduler()).fired(job, due));
  if (queue === undefined || queue.schedule === undefined) {
    app.addHook("onReady", async () => {
      // Without crons, nothing loads; a store that does not answer now leaves them for the next start.
      const enabled = await backendCall("the cron records", context.backendTimeoutMs, () => records.enabled()).catch((error: unknown) => {
        app.log.warn({ err: error }, "could not read the crons at start; they fire once the server restarts with the store up");
        return [];
      });
      if (enabled.length === 0) return;
      await (await scheduler()).start().catch((error: unknown) => {
        app.log.warn({ err: error }, "could not arm the crons at start; they fire once the server restarts with the store up");
      });
    });
  }
  app.addHook("onClose", async () => (await made)?.close());
  return scheduler;
}
