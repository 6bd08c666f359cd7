import type { FastifyInstance } from "fastify";
import type { GraphRegistry } from "../registry/graph-registry.js";
import { withDeadline } from "../util/deadline.js";

/** A named readiness probe of something the deployment depends on. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

/**
 * `GET /health` (liveness) and `GET /ready` (each dependency checked at once, each within the
 * backend deadline, so a stalled backend makes `/ready` answer 503 naming it, never hang).
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
  app.get(path, { schema: { summary: "Readiness of every backend", tags: ["health"] } }, async (request, reply) => {
    // A draining server sends its load balancer elsewhere at once.
    if (isDraining()) return reply.status(503).header("retry-after", "1").send({ status: "draining", checks: {} });
    const outcomes = await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withDeadline(`readiness check '${name}'`, timeoutMs, check());
          return [name, "ok"] as const;
        } catch (error) {
          request.log.warn({ err: error, check: name }, "readiness check failed");
          return [name, "unavailable"] as const;
        }
      }),
    );
    const results = Object.fromEntries(outcomes);
    const ready = outcomes.every(([, status]) => status === "ok");
    if (!ready) return reply.status(503).send({ status: "unavailable", checks: results });
    return { status: "ready", checks: results };
  });
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
