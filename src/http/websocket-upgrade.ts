import { type IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket, WebSocketServer } from "ws";

// WebSocket upgrades routed through fastify, so that a socket's GET passes the mount's hooks
// (keys, tenants, limits, request ids) and is refused in the surface's own shape before any
// handshake. The WebSocket protocol itself is `ws`'s, loaded at the first upgrade: a server
// that never upgrades never loads it (`@fastify/websocket` loads it at every start, about
// 20 ms of a start-up that is otherwise 100 ms).

/** The socket and first bytes of an upgrade request, until its route accepts or refuses it. */
const UPGRADE = Symbol("chat-serve.upgrade");
type UpgradeRequest = IncomingMessage & { [UPGRADE]?: { socket: Duplex; head: Buffer } };

interface ServerUpgrades {
  /** The paths (with their mount's prefix) a WebSocket may open, as patterns. */
  paths: RegExp[];
  /** The sockets open now: a closing server closes them (it waits for every connection). */
  open: Set<WebSocket>;
  /** True once the server has begun to close: a socket that opens then is closed at once. */
  closing: boolean;
}

/** Closed because the server is going away. */
const GOING_AWAY = 1001;

const SERVERS = new WeakMap<object, ServerUpgrades>();

function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** `/threads/:thread_id/stream/events` as a pattern of whole paths. */
function pattern(path: string): RegExp {
  const escaped = path.replace(/[.+?^${}()|[\]\\]/gu, "\\$&").replace(/:[A-Za-z_]+/gu, "[^/]+");
  return new RegExp(`^${escaped}$`, "u");
}

/**
 * Lets WebSockets open at `paths` (relative to the mount's prefix): their upgrade requests
 * are routed through fastify like any request. The listener is the server's one (shared by
 * every mount) and leaves other paths to the host's own upgrade listeners, if it has any.
 */
export function acceptUpgrades(app: FastifyInstance, paths: readonly string[]): void {
  const server = app.server;
  let upgrades = SERVERS.get(server);
  if (upgrades === undefined) {
    const known: ServerUpgrades = { paths: [], open: new Set(), closing: false };
    const listener = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? "/").split("?")[0] ?? "/";
      // Another listener's path (a host app's own sockets): not ours to answer.
      if (!known.paths.some((candidate) => candidate.test(path)) && server.listenerCount("upgrade") > 1) return;
      // Node takes its error listener off the socket before it emits `upgrade`.
      socket.on("error", destroyOnError);
      (request as UpgradeRequest)[UPGRADE] = { socket, head };
      const response = new ServerResponse(request);
      response.assignSocket(socket as never);
      // A request answered over HTTP (refused, or not a socket's path) ends its connection.
      response.once("finish", () => socket.destroy());
      app.routing(request, response);
    };
    upgrades = known;
    SERVERS.set(server, known);
    server.on("upgrade", listener);
    // Before the server closes: it waits for every connection, and an upgraded one is ours to end.
    app.addHook("preClose", async () => {
      known.closing = true;
      server.off("upgrade", listener);
      for (const socket of known.open) socket.close(GOING_AWAY, "The server is closing.");
      known.open.clear();
    });
    app.addHook("onClose", async () => {
      SERVERS.delete(server);
    });
  }
  for (const path of paths) upgrades.paths.push(pattern(`${app.prefix}${path}`));
}

/** Whether a request asks to open a WebSocket (and reached a route through `acceptUpgrades`). */
export function isUpgrade(request: FastifyRequest): boolean {
  return (request.raw as UpgradeRequest)[UPGRADE] !== undefined;
}

const SOCKET_SERVERS = new Map<number, WebSocketServer>();

/**
 * Completes the handshake of an upgrade request that passed its route's checks: the reply is
 * hijacked and the socket is the caller's. Undefined when the client left meanwhile.
 */
export async function openWebSocket(request: FastifyRequest, reply: FastifyReply, maxPayload: number): Promise<WebSocket | undefined> {
  const upgrade = (request.raw as UpgradeRequest)[UPGRADE];
  if (upgrade === undefined) throw new Error("openWebSocket() needs an upgrade request");
  reply.hijack();
  let sockets = SOCKET_SERVERS.get(maxPayload);
  if (sockets === undefined) {
    const { WebSocketServer } = await import("ws");
    sockets = SOCKET_SERVERS.get(maxPayload) ?? new WebSocketServer({ noServer: true, maxPayload, clientTracking: false });
    SOCKET_SERVERS.set(maxPayload, sockets);
  }
  const { socket, head } = upgrade;
  socket.off("error", destroyOnError);
  if (socket.destroyed) return undefined;
  const server = sockets;
  reply.raw.statusCode = 101;
  const websocket = await new Promise<WebSocket | undefined>((resolve) => {
    // `ws` answers a bad handshake (a missing key, a wrong version) itself and closes the socket.
    const gone = () => resolve(undefined);
    socket.once("close", gone);
    server.handleUpgrade(request.raw, socket, head, (opened) => {
      socket.off("close", gone);
      resolve(opened);
    });
  });
  if (websocket === undefined) return undefined;
  const upgrades = SERVERS.get(request.server.server);
  if (upgrades === undefined || upgrades.closing) {
    websocket.close(GOING_AWAY, "The server is closing.");
    return undefined;
  }
  upgrades.open.add(websocket);
  websocket.once("close", () => upgrades.open.delete(websocket));
  return websocket;
}
