import type { FastifyInstance } from "fastify";

/** A named readiness probe of something the deployment depends on. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

/** `GET /health` (liveness) and `GET /ready` (each dependency checked). */
export function registerHealthRoutes(app: FastifyInstance, checks: readonly ReadinessCheck[]): void {
  app.get("/health", { schema: { summary: "Liveness", tags: ["health"] } }, async () => ({ status: "ok" }));
  app.get("/ready", { schema: { summary: "Readiness of every backend", tags: ["health"] } }, async (request, reply) => {
    const results: Record<string, string> = {};
    let ready = true;
    for (const { name, check } of checks) {
      try {
        await check();
        results[name] = "ok";
      } catch (error) {
        ready = false;
        results[name] = "unavailable";
        request.log.warn({ err: error, check: name }, "readiness check failed");
      }
    }
    if (!ready) return reply.status(503).send({ status: "unavailable", checks: results });
    return { status: "ready", checks: results };
  });
}
