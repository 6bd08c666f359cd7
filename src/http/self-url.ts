import type { FastifyRequest } from "fastify";

/** Where a host mounted chat-serve (`app.use("/ai", …)`), as its host handler recorded it on the raw request. */
export const MOUNT = Symbol.for("chat-serve.mount");

/**
 * The absolute URL of `path` on this server, as the client reached it: its scheme, host and
 * the host's mount path (`req.baseUrl` under Express, `mountPath` elsewhere), then `path`.
 */
export function selfUrl(request: FastifyRequest, path: string): string {
  const mount = (request.raw as { [MOUNT]?: unknown })[MOUNT];
  return `${request.protocol}://${request.host}${typeof mount === "string" ? mount : ""}${path}`;
}
