import type { FastifyRequest } from "fastify";

/** Where a host mounted chat-serve (`app.use("/ai", …)`), as its host handler recorded it on the raw request. */
export const MOUNT = Symbol.for("chat-serve.mount");

/**
 * The absolute URL of `path` on this server, as the client reached it: its scheme, host and
 * the host's mount path (`req.baseUrl` under Express, `mountPath` elsewhere), then `path`.
 */
export function selfUrl(request: FastifyRequest, path: string): string {
  return `${request.protocol}://${request.host}${mountOf(request)}${path}`;
}

/** The host's mount path of this request (`/ai`), or "" when chat-serve is not mounted under one. */
export function mountOf(request: FastifyRequest): string {
  const mount = (request.raw as { [MOUNT]?: unknown })[MOUNT];
  return typeof mount === "string" ? mount : "";
}
