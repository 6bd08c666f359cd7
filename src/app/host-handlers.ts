import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import { MOUNT } from "../http/self-url.js";

// chat-serve in a host that is not fastify: Express, Connect and `node:http` (a Node request
// handler), Hono, Next.js route handlers, Bun and Deno (a web `fetch` handler). Both hand the
// request to the fastify app chat-serve made (never listening itself), so every surface, hook
// and policy is the same as on `chat-serve start`.

/** Where the host mounts chat-serve: the path its URLs start with, taken off before routing. */
export interface HostOptions {
  /**
   * The path the host serves chat-serve under (`/api/ai`), when the URLs chat-serve sees still
   * start with it: a Next.js catch-all route, `app.all("/ai/*")` in Hono, a bare `node:http`
   * server. Express and Connect take their mount path off already (`app.use("/ai", handler)`).
   */
  mountPath?: string;
}

/** What a host knows of its caller, for `auth.authenticate` and `checkpointScope` to read as `request.raw.user`. */
export interface FetchOptions extends HostOptions {
  /** The host's authenticated principal (what its own auth middleware found). */
  user?: unknown;
  /** The client's address, for limits counted per client (without it, every request counts as one client). */
  clientAddress?: string;
}

type RawRequest = IncomingMessage & { user?: unknown; body?: unknown; _body?: unknown; baseUrl?: string; [MOUNT]?: string };

/**
 * Where the host mounts chat-serve, as `mountPath` gives it or Express records it
 * (`req.baseUrl`, which Express takes off the URL): kept on the raw request for the URLs
 * chat-serve writes for itself (A2A's agent cards), never read from a header a client could send.
 */
function recordMount(request: RawRequest, mountPath: string): void {
  const mount = mountPath !== "" ? mountPath : typeof request.baseUrl === "string" ? request.baseUrl.replace(/\/+$/u, "") : "";
  if (mount !== "") request[MOUNT] = mount;
}

/** A mount path as given, normalised: `/ai` (no trailing slash), or "" for none. */
function normalizeMountPath(mountPath: string | undefined): string {
  if (mountPath === undefined || mountPath === "" || mountPath === "/") return "";
  if (!mountPath.startsWith("/")) throw new TypeError(`mountPath must start with "/" (got ${JSON.stringify(mountPath)})`);
  return mountPath.replace(/\/+$/u, "");
}

/** `url` without the mount path, when it starts with it. */
function unmounted(url: string, mountPath: string): string {
  if (mountPath === "" || !(url === mountPath || url.startsWith(`${mountPath}/`) || url.startsWith(`${mountPath}?`))) return url;
  const rest = url.slice(mountPath.length);
  return rest === "" || rest.startsWith("?") ? `/${rest}` : rest;
}

/** True when a host's body parser (Express's `json()`) read the body before chat-serve saw it. */
function bodyConsumed(request: RawRequest): boolean {
  return request.readableEnded && (request.body !== undefined || request._body === true);
}

/**
 * A Node request handler over the bound app: the request routed as it is (streams, keep-alives,
 * a client's disconnect all native), or, when a host's body parser has read the body already,
 * replayed from what it parsed (JSON) with the response streamed back.
 */
export function nodeHandler(
  ready: () => Promise<FastifyInstance>,
  options: HostOptions = {},
): (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void {
  const mountPath = normalizeMountPath(options.mountPath);
  return (request, response, next) => {
    ready().then(
      (app) => {
        const raw = request as RawRequest;
        recordMount(raw, mountPath);
        request.url = unmounted(request.url ?? "/", mountPath);
        if (!bodyConsumed(raw)) {
          app.routing(request, response);
          return;
        }
        return replayParsedBody(app, raw, response);
      },
      (error: unknown) => {
        if (next !== undefined) next(error);
        else response.destroy(error as Error);
      },
    );
  };
}

/** One request run through the app in process, its response's body a stream that flows as it is written. */
async function injectStreaming(
  app: FastifyInstance,
  request: {
    method: string;
    url: string;
    headers: Record<string, string | string[] | undefined>;
    payload?: string | Buffer;
    user?: unknown;
    mount?: string;
  },
  options: { remoteAddress?: string; authority?: string } = {},
) {
  const { default: inject } = await import("light-my-request");
  return inject(
    (raw, res) => {
      if (request.user !== undefined) (raw as RawRequest).user = request.user;
      if (request.mount !== undefined && request.mount !== "") (raw as RawRequest)[MOUNT] = request.mount;
      app.routing(raw, res);
    },
    {
      method: request.method as "POST",
      url: request.url,
      headers: request.headers,
      ...(request.payload === undefined ? {} : { payload: request.payload }),
      payloadAsStream: true,
      ...options,
    },
  );
}

/** The request a host's body parser consumed, run again with its parsed body as JSON. */
async function replayParsedBody(app: FastifyInstance, request: RawRequest, response: ServerResponse): Promise<void> {
  const headers = { ...request.headers };
  delete headers["content-length"];
  delete headers["transfer-encoding"];
  const payload = typeof request.body === "string" || Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body ?? null);
  const injected = await injectStreaming(
    app,
    { method: request.method ?? "POST", url: request.url ?? "/", headers, payload, user: request.user, mount: request[MOUNT] },
    { remoteAddress: request.socket.remoteAddress ?? "127.0.0.1" },
  );
  // The client left: so does the run behind it.
  const stop = () => (injected.raw.res as ServerResponse).destroy();
  response.once("close", stop);
  response.writeHead(injected.statusCode, injected.headers as Record<string, string>);
  const body = injected.stream();
  body.on("error", () => response.destroy());
  body.pipe(response).once("finish", () => response.off("close", stop));
}

/**
 * A web `Request` answered with a `Response` whose body streams each event as it is written;
 * cancelling the body (or aborting the request's signal) ends the run behind it.
 */
export async function fetchHandler(app: FastifyInstance, request: Request, options: FetchOptions = {}): Promise<Response> {
  const mountPath = normalizeMountPath(options.mountPath);
  const url = new URL(request.url);
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : Buffer.from(await request.arrayBuffer());
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const injected = await injectStreaming(
    app,
    {
      method: request.method,
      url: unmounted(`${url.pathname}${url.search}`, mountPath),
      headers,
      ...(body === undefined ? {} : { payload: body }),
      user: options.user,
      mount: mountPath,
    },
    { authority: url.host, ...(options.clientAddress === undefined ? {} : { remoteAddress: options.clientAddress }) },
  );
  const res = injected.raw.res as ServerResponse;
  const stream = injected.stream();
  const stop = () => {
    if (!res.writableFinished) res.destroy();
    stream.destroy();
  };
  if (request.signal.aborted) stop();
  request.signal.addEventListener("abort", stop, { once: true });
  stream.once("close", () => request.signal.removeEventListener("abort", stop));
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(injected.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [String(value)]) responseHeaders.append(name, one);
  }
  const nullBody = request.method === "HEAD" || injected.statusCode === 204 || injected.statusCode === 304;
  return new Response(nullBody ? null : webStream(stream, stop), { status: injected.statusCode, headers: responseHeaders });
}

/** A Node readable as a web stream that pulls as it is read, and whose cancel calls `stop`. */
function webStream(stream: NodeJS.ReadableStream & { destroyed?: boolean }, stop: () => void): ReadableStream<Uint8Array> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value));
      } catch {
        // The run was stopped under the stream (the server closed): end it where it is.
        controller.close();
      }
    },
    cancel() {
      stop();
    },
  });
}

/** A Node `upgrade` listener over the bound app, for the WebSocket modes through a host's own server. */
export function upgradeHandler(
  ready: () => Promise<FastifyInstance>,
  options: HostOptions = {},
): (request: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const mountPath = normalizeMountPath(options.mountPath);
  return (request, socket, head) => {
    ready().then(
      (app) => {
        recordMount(request as RawRequest, mountPath);
        request.url = unmounted(request.url ?? "/", mountPath);
        app.server.emit("upgrade", request, socket, head);
      },
      () => socket.destroy(),
    );
  };
}
