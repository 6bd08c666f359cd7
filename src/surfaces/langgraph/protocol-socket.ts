import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import type { FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { UpgradeRequiredError } from "../../errors/catalogue.js";
import { toServeError } from "../../errors/to-serve-error.js";
import { whenSocketWritable } from "../../http/writable.js";
import { protocolJson } from "../../runs/agent/agent-graph.js";
import type { LoggedProtocolEvent, ProtocolEvent, ProtocolFilter } from "../../runs/agent/protocol-log.js";
import type { ProtocolCommand, StartRun } from "../../runs/agent/protocol-threads.js";
import type { LangGraphRoutes } from "./langgraph-routes.js";
import { guardProtocolThread, guardRunCreate, type ThreadWatch, watchProtocolThread } from "./route-auth.js";

/** What a socket's commands need of the HTTP side: how they are parsed, matched and run. */
export interface ProtocolSocketDeps {
  routes: LangGraphRoutes;
  /** A command's shape, as `POST /commands` checks it. */
  parseCommand(body: unknown): ProtocolCommand;
  /** A subscription's filter, as `POST /stream/events` checks it. */
  parseFilter(body: unknown): ProtocolFilter;
  /** Whether a subscription's filter takes an event (LangGraph's own matching). */
  matches(event: ProtocolEvent, filter: ProtocolFilter): boolean;
}

const OPEN = 1;
/** Closed because the server is going away (its `close()`). */
const GOING_AWAY = 1001;
/** The close code of a socket the server refuses to serve (RFC 6455). */
const POLICY_VIOLATION = 1008;

/** A GET of the socket's path that is not upgraded (426): a plain request, or the WebSocket turned off. */
export function upgradeRequired(threadId: string, served: boolean): UpgradeRequiredError {
  const path = `/threads/${threadId.slice(0, 80)}/stream/events`;
  return new UpgradeRequiredError(
    served
      ? `GET ${path} is protocol v2's WebSocket: connect with a WebSocket client, or POST a filter to it for server-sent events.`
      : `Protocol v2 over a WebSocket is off on this server (server.langgraph.websocket is false): set server.langgraph to { websocket: true } in chat-serve.config.ts, or follow the thread with server-sent events (POST ${path}), the SDK's default transport.`,
  );
}

/**
 * Protocol v2 over a WebSocket (`GET /threads/{id}/stream/events`, upgraded after the
 * mount's hooks: keys, limits, request ids): commands in,
 * their answers and the thread's events out, on one ordered socket.
 */
export async function serveProtocolSocket(
  socket: WebSocket,
  request: FastifyRequest<{ Params: { thread_id: string } }>,
  deps: ProtocolSocketDeps,
  /** What the client sent while the engine loaded; `stop()` ends that collection. */
  early: { messages: string[]; stop(): void },
): Promise<void> {
  const scope = await deps.routes.scopeOf(request);
  let allowed: ThreadWatch;
  try {
    allowed = await watchProtocolThread(deps.routes, request, scope, request.params.thread_id);
  } catch (error) {
    // Upgraded already: the refusal is the close (a thread of another user is not found, as over HTTP).
    early.stop();
    socket.close(POLICY_VIOLATION, Buffer.from(toServeError(error).message).subarray(0, 120).toString());
    return;
  }
  // In one turn: the early messages stop coming there and start coming here.
  early.stop();
  serveSocket(socket, { request, scope, threadId: request.params.thread_id, deps, early: early.messages, allowed });
}

interface Subscription {
  filter: ProtocolFilter;
  /** Events up to this `seq` reached the client in its replay (or before it subscribed). */
  after: number;
}

function serveSocket(
  socket: WebSocket,
  session: {
    request: FastifyRequest;
    scope: string;
    threadId: string;
    deps: ProtocolSocketDeps;
    early: string[];
    /** Whether the thread's events may still reach this socket's user (another's thread: the socket closes). */
    allowed: ThreadWatch;
  },
): void {
  const { request, scope, threadId, deps, allowed } = session;
  const { protocol, runs } = deps.routes;
  const subscriptions = new Map<string, Subscription>();
  const controller = new AbortController();
  const send = (json: string) => {
    if (socket.readyState === OPEN) socket.send(json);
  };
  /** The `seq` of the last event the socket's feed took from the thread's log. */
  let fed = 0;
  /** What the feed takes while a subscription's replay is read: sent after the replay, in order. */
  let held: LoggedProtocolEvent[] | undefined;
  const answer = (id: number | null, response: Record<string, unknown>) =>
    send(JSON.stringify({ id, meta: { thread_id: threadId, applied_through_seq: fed }, ...response }));
  const fail = (id: number | null, error: string, message: string) => answer(id, { type: "error", error, message });
  /** False, and the socket closed as a thread that is not found, once the thread proves another user's. */
  const mayRead = async (): Promise<boolean> => {
    if (await allowed()) return true;
    controller.abort();
    socket.close(POLICY_VIOLATION, `Thread ${threadId.slice(0, 40)} not found.`);
    return false;
  };
  /** An event goes out once if a subscription wants it. */
  const deliver = ({ event, json }: LoggedProtocolEvent) => {
    for (const subscription of subscriptions.values()) {
      if (event.seq > subscription.after && deps.matches(event, subscription.filter)) {
        send(json);
        return;
      }
    }
  };

  // One feed of the thread's events from now on (the log may be another process's, in Redis).
  const feedStart = protocol.seq(scope, threadId).then((seq) => {
    fed = seq;
  });
  void (async () => {
    await feedStart;
    for await (const logged of protocol.followAll(scope, threadId, fed, controller.signal)) {
      fed = logged.event.seq;
      if (!(await mayRead())) return;
      if (held !== undefined) {
        held.push(logged);
        continue;
      }
      deliver(logged);
      // A client that stops reading is waited for (the events stay in the thread's log), then dropped.
      const full = whenSocketWritable(socket, deps.routes.stalledClientMs);
      if (full !== undefined) await full;
    }
    // The log closed under it (the server is closing): so does the socket.
    if (!controller.signal.aborted) socket.close(GOING_AWAY, "The server is closing.");
  })().catch((error: unknown) => {
    request.log.warn({ err: error }, "a protocol WebSocket's event feed failed");
    socket.close(GOING_AWAY, "The thread's events could not be read.");
  });

  const startRun: StartRun = async (asked) => {
    // The socket's upgrade request's headers, as for a command sent over HTTP.
    const { run, model } = await deps.routes.prepareRun(request, scope, asked);
    await guardRunCreate(deps.routes, request, scope, threadId, run);
    // Limits count the run; a refusal is the command's error (the socket has no headers to set).
    const admission = await deps.routes.limits?.admit(request, undefined, model);
    try {
      return await runs.startInBackground(scope, threadId, run, admission);
    } catch (error) {
      await admission?.();
      throw error;
    }
  };

  const subscribe = async (id: number, params: unknown) => {
    const filter = deps.parseFilter(params ?? {});
    await feedStart;
    const subscriptionId = uuid7();
    // Answer first, then the replay (up to where the feed stands), then live: what the feed
    // takes meanwhile is held and goes out after the replay, so nothing falls between them.
    held = [];
    try {
      const upTo = fed;
      const since = filter.since ?? 0;
      const { events } = since >= upTo ? { events: [] } : await protocol.logged(scope, threadId, since);
      const replay = events.filter(({ event }) => event.seq <= upTo && deps.matches(event, filter));
      if (replay.length > 0 && !(await mayRead())) return;
      answer(id, { type: "success", result: { subscription_id: subscriptionId, replayed_events: replay.length } });
      for (const { json } of replay) send(json);
      subscriptions.set(subscriptionId, { filter, after: Math.max(upTo, since) });
    } finally {
      const taken = held;
      held = undefined;
      for (const logged of taken) deliver(logged);
    }
  };

  const handle = async (data: string) => {
    let command: ProtocolCommand;
    try {
      command = deps.parseCommand(JSON.parse(data));
    } catch (error) {
      const id = (() => {
        try {
          const parsed = JSON.parse(data) as { id?: unknown };
          return typeof parsed.id === "number" ? parsed.id : null;
        } catch {
          return null;
        }
      })();
      fail(id, "invalid_argument", error instanceof SyntaxError ? "A command must be a JSON object." : (error as Error).message);
      return;
    }
    const params = command.params ?? {};
    try {
      // Each command is the thread's reader's, as over HTTP: a thread another user made since the socket opened is not found.
      await guardProtocolThread(deps.routes, request, scope, threadId);
      switch (command.method) {
        case "subscription.subscribe":
          await subscribe(command.id, params);
          return;
        case "subscription.unsubscribe": {
          const subscriptionId = typeof params.subscription_id === "string" ? params.subscription_id : "";
          if (!subscriptions.delete(subscriptionId)) {
            fail(command.id, "no_such_subscription", `No subscription ${subscriptionId.slice(0, 80)} on this socket.`);
            return;
          }
          answer(command.id, { type: "success", result: {} });
          return;
        }
        case "subscription.reconnect":
          // Subscriptions live with their socket: none is restored; the client subscribes again with `since`.
          answer(command.id, { type: "success", result: await protocol.reconnect(scope, threadId, params) });
          return;
        default:
          // Messages as the protocol writes them (`{ type, content, … }`), as over HTTP.
          send(protocolJson(await protocol.command(scope, threadId, command, startRun)) ?? "null");
      }
    } catch (error) {
      // The same mistakes as over HTTP (an unknown assistant, a busy thread, a limit), in the protocol's terms.
      const failure = toServeError(error);
      if (failure.status < 500) fail(command.id, failure.status === 404 ? "no_such_run" : "invalid_argument", failure.message);
      else {
        request.log.error({ err: error }, "a protocol WebSocket command failed");
        fail(command.id, "internal_error", "The command failed on the server; see its log.");
      }
    }
  };

  // Commands are answered in the order they came.
  let queue = Promise.resolve();
  for (const text of session.early) queue = queue.then(() => handle(text));
  socket.on("message", (data, isBinary) => {
    const text = isBinary ? "" : String(data);
    queue = queue.then(() => handle(text));
  });
  socket.on("error", () => socket.terminate());
  socket.once("close", () => {
    controller.abort();
    subscriptions.clear();
  });
}
