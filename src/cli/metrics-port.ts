import Fastify from "fastify";
import { registerScrapeRoute } from "../http/host-app.js";
import type { MetricsSettings } from "../http/metrics.js";
import { lazySchemaController } from "../http/schema-compilers.js";

/**
 * The scrape on a port of its own (`metrics.port`), on the server's host: a small fastify app
 * with the one route. Returns its address and the function that closes it.
 */
export async function serveMetricsPort(
  settings: MetricsSettings & { port: number },
  host: string,
  source: { scrape(): Promise<{ contentType: string; body: string }> },
): Promise<{ address: string; close: () => Promise<void> }> {
  const app = Fastify({ logger: false, schemaController: lazySchemaController });
  registerScrapeRoute(app, source, settings);
  const address = await app.listen({ host, port: settings.port });
  return { address, close: () => app.close() };
}
