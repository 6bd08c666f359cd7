import type { FastifyInstance } from "fastify";
import type { GraphRegistry } from "../registry/graph-registry.js";
import { withDeadline } from "../util/deadline.js";

/** A named readiness probe of something the deployment depends on. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
  /**
   * Whether the replica serves nothing while this fails (the graphs themselves). Default false:
   * a backend down leaves the replica serving what needs no such backend, so `/ready` says
   * `degraded` (200) and the requests that need it get chat-serve's own 503.
   */
  essential?: boolean;
}

/**
 * `GET /health` (liveness) and `GET /ready` (each dependency checked at once, each within the
 * backend deadline, never a hang): 200 `ready`; 200 `degraded` naming a backend that is down
 * while the replica still serves what needs none (a Redis outage shared by every replica must
 * not take them all out of the balancer); 503 while draining, when the graphs do not load, or,
 * with `?strict=true`, whenever any check fails.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  checks: readonly ReadinessCheck[],
  timeoutMs: number,
  isDraining: () => boolean,
): void {
  app.get("/health", { schema: { summary: "Liveness", tags: ["health"] } }, async () => ({ status: "ok" }));
  registerReadiness(app, "/ready", checks, timeoutMs, isDraining);
}

/** `GET {path}`: readiness, as `registerHealthRoutes` serves it under the prefix. */
export function registerReadiness(
  app: FastifyInstance,
  path: string,
  checks: readonly ReadinessCheck[],
  timeoutMs: number,
  isDraining: () => boolean,
): void {
  app.get<{ Querystring: { strict?: string } }>(
    path,
    { schema: { summary: "Readiness of every backend", tags: ["health"] } },
    async (request, reply) => {
      // A draining server sends its load balancer elsewhere at once.
      if (isDraining()) return reply.status(503).header("retry-after", "1").send({ status: "draining", checks: {} });
      const outcomes = await Promise.all(
        checks.map(async ({ name, check, essential }) => {
          try {
            await withDeadline(`readiness check '${name}'`, timeoutMs, check());
            return [name, "ok", essential === true] as const;
          } catch (error) {
            request.log.warn({ err: error, check: name }, "readiness check failed");
            return [name, "unavailable", essential === true] as const;
          }
        }),
      );
      const results = Object.fromEntries(outcomes.map(([name, status]) => [name, status]));
      const failed = outcomes.filter(([, status]) => status !== "ok");
      if (failed.length === 0) return { status: "ready", checks: results };
      const strict = request.query.strict === "true" || request.query.strict === "1";
      if (strict || failed.some(([, , essential]) => essential)) return reply.status(503).send({ status: "unavailable", checks: results });
      return { status: "degraded", checks: results };
    },
  );
}

/** One readiness check per distinct run coordinator of the registry's interrupt graphs. */
export function coordinatorChecks(registry: GraphRegistry): ReadinessCheck[] {
  const coordinators = new Set(registry.getGraphNames().map((name) => registry.getGraph(name).runCoordinator));
  return [...coordinators]
    .filter((coordinator) => coordinator?.check !== undefined)
    .map((coordinator, index) => ({
      name: index === 0 ? "coordinator" : `coordinator-${index + 1}`,
      check: () => coordinator!.check!(),
    }));
}
