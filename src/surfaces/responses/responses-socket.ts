import type { FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { type ParsedResponsesRequest, parseResponsesRequest } from "../../dialects/responses/parse-responses-request.js";
import { responseId } from "../../dialects/responses/response-id.js";
import { ResponseRenderer } from "../../dialects/responses/response-renderer.js";
import { planResponsesRun, runRenderer, saveResponse } from "../../dialects/responses/responses-run.js";
import { InvalidRequestError, ServerShuttingDownError, StoredObjectNotFoundError } from "../../errors/catalogue.js";
import { isChatServeError, type ServeError } from "../../errors/serve-error.js";
import { toServeError } from "../../errors/to-serve-error.js";
import { observedEvents, type RunClient, type RunRouteOptions, requestScope, runErrorBody, runForClient } from "../../http/run-request.js";
import { assertVisible } from "../../http/visibility.js";
import { openWebSocket } from "../../http/websocket-upgrade.js";
import { whenSocketWritable } from "../../http/writable.js";
import { streamRun } from "../../runs/stream-run.js";

// The Responses API's WebSocket mode (`GET /responses` upgraded), as Open Responses specifies
// it: each `response.create` message runs one response, its events sent as on the SSE stream,
// one response at a time per connection. A continuation of the connection's last response
// needs no store: with `store: false`, the connection keeps that response's items, and forgets
// them when a continuation fails.

const OPEN = 1;
/** Closed normally: idle too long. */
const NORMAL = 1000;

export interface ResponsesSocketOptions extends RunRouteOptions {
  isDraining(): boolean;
  /** A connection with no response running and no message for this long is closed. */
  idleMs: number;
}

/**
 * The connection's last response: its id and, with `store: false`, its input and output items
 * and the stored response those continue (if any).
 */
interface LastResponse {
  id: string;
  items?: unknown[];
  previous?: string;
}

/** A failure as the spec's WebSocket error event: an HTTP-style status and an OpenAI error object. */
function errorEvent(error: ServeError) {
  const code =
    isChatServeError(error, StoredObjectNotFoundError) && error.param === "previous_response_id"
      ? "previous_response_not_found"
      : error.code;
  return { type: "error", status: error.status, error: { type: error.type, code, message: error.message, param: error.param } };
}

/** A request's input as a list of items (a string is one user message). */
function inputItems(input: unknown): unknown[] {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return Array.isArray(input) ? input : [input];
}

/**
 * Upgrades a `GET /responses` and serves the connection until it closes (a closing server
 * closes it: `openWebSocket` keeps it among the server's open sockets).
 */
export async function serveResponsesSocket(request: FastifyRequest, reply: FastifyReply, options: ResponsesSocketOptions): Promise<void> {
  const socket = await openWebSocket(request, reply, options.bodyLimit * 4);
  if (socket !== undefined) new ResponsesSession(socket, request, options).start();
}

class ResponsesSession {
  #busy = false;
  #last: LastResponse | undefined;
  #idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly request: FastifyRequest,
    private readonly options: ResponsesSocketOptions,
  ) {}

  start(): void {
    this.socket.on("message", (data, isBinary) => this.#onMessage(data as Buffer, isBinary));
    this.socket.on("error", () => this.socket.terminate());
    this.socket.once("close", () => clearTimeout(this.#idle));
    this.#armIdle();
  }

  #send(event: unknown): void {
    if (this.socket.readyState === OPEN) this.socket.send(JSON.stringify(event));
  }

  #armIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      const idle = this.options.idleMs;
      const time = idle < 1000 ? `${idle} ms` : idle < 120_000 ? `${Math.round(idle / 1000)} s` : `${Math.round(idle / 60_000)} minutes`;
      this.socket.close(NORMAL, `Idle for ${time} with no response running: connect again to continue.`);
    }, this.options.idleMs);
    this.#idle.unref();
  }

  #onMessage(data: Buffer, isBinary: boolean): void {
    if (this.#busy) {
      // The response running keeps its place; this message is refused, the connection stays.
      this.#send(
        errorEvent(
          new InvalidRequestError(
            "A response is already running on this connection: send the next response.create after its last event, or open another connection.",
            { code: "response_in_progress" },
          ),
        ),
      );
      return;
    }
    let message: Record<string, unknown>;
    try {
      message = this.#read(data, isBinary);
    } catch (error) {
      this.#send(errorEvent(toServeError(error)));
      this.#armIdle();
      return;
    }
    this.#busy = true;
    clearTimeout(this.#idle);
    void this.#create(message).finally(() => {
      this.#busy = false;
      if (this.socket.readyState === OPEN) this.#armIdle();
    });
  }

  /** A client message, checked: a JSON `response.create` without the HTTP-only fields. */
  #read(data: Buffer, isBinary: boolean): Record<string, unknown> {
    if (isBinary) throw new InvalidRequestError("Send each message as a JSON text frame, not a binary one.", { code: "invalid_message" });
    if (data.length > this.options.bodyLimit) {
      throw new InvalidRequestError(`The message is ${data.length} bytes; the largest taken is ${this.options.bodyLimit}.`, {
        code: "request_too_large",
      });
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString("utf8"));
    } catch {
      throw new InvalidRequestError("The message is not valid JSON: send a response.create event as a JSON object.", {
        code: "invalid_json",
      });
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      throw new InvalidRequestError("A message must be a JSON object with its type: response.create.", { code: "invalid_message" });
    }
    const { type } = message as { type?: unknown };
    if (type !== "response.create") {
      throw new InvalidRequestError(
        `Unknown message type ${JSON.stringify(type ?? null)?.slice(0, 80)}: this connection takes response.create messages.`,
        { code: "unknown_message_type", param: "type" },
      );
    }
    // Every response streams on the connection: `stream: true` (Codex sends it) and
    // `stream_options` change nothing; what would change the answer is refused.
    const { stream, background, generate } = message as { stream?: unknown; background?: unknown; generate?: unknown };
    if (stream !== undefined && stream !== true) {
      throw new InvalidRequestError("stream must be true over a WebSocket: every response streams on the connection.", {
        param: "stream",
        code: "invalid_value",
      });
    }
    if (background !== undefined && background !== false) {
      throw new InvalidRequestError("background responses are created over HTTP, not over a WebSocket.", {
        param: "background",
        code: "invalid_value",
      });
    }
    if (generate !== undefined && typeof generate !== "boolean") {
      throw new InvalidRequestError("generate must be a boolean.", { param: "generate", code: "invalid_value" });
    }
    return message as Record<string, unknown>;
  }

  /** One `response.create`: a response run and streamed, or an error event; the connection stays open. */
  async #create(message: Record<string, unknown>): Promise<void> {
    const { type: _type, stream: _stream, stream_options: _options, background: _background, generate, ...body } = message;
    const last = this.#last;
    // A failed continuation forgets the response it continued: it is not continued again.
    this.#last = undefined;
    try {
      if (this.options.isDraining()) throw new ServerShuttingDownError();
      // The connection's own last response, not stored: its items go first, in place of the id.
      const inline = last?.items !== undefined && body.previous_response_id === last.id;
      const input = inline ? [...(last.items ?? []), ...inputItems(body.input)] : inputItems(body.input);
      const create = inline ? { ...body, previous_response_id: last.previous, input } : body;
      const finished = generate === false ? await this.#warmUp(create, input) : await this.#run(create, input);
      if (finished !== undefined) this.#last = finished;
    } catch (error) {
      const failure = toServeError(error);
      if (failure.status >= 500) this.request.log.error({ err: error }, "a Responses WebSocket message failed");
      this.#send(errorEvent(failure));
    }
  }

  /**
   * `generate: false` (Codex warms a connection up with it): the request is checked as any is,
   * and answered with a response completed with no output, the graph not run. The connection
   * keeps its input, so the next `response.create` continues it by id with only what is new.
   */
  async #warmUp(body: Record<string, unknown>, input: unknown[]): Promise<LastResponse> {
    const { request, options } = this;
    const parsed = parseResponsesRequest({ ...body, stream: true });
    assertVisible(options.registry, request.chatServeCaller, parsed.body.model);
    options.registry.getGraph(parsed.body.model); // an unknown model: its 404 (model_not_found)
    const renderer = new ResponseRenderer(responseId(), parsed.body, false, true);
    for (const event of renderer.empty()) this.#send(event);
    const previous = parsed.previousResponseId;
    return { id: renderer.response.id, items: input, ...(previous === undefined ? {} : { previous }) };
  }

  /**
   * A `compaction_trigger` (Codex's remote compaction): one `compaction` item, no run. The
   * connection's next response continues from the input and that item, read as a summary of
   * the assistant's turns before it.
   */
  async #compact(parsed: ParsedResponsesRequest, input: unknown[]): Promise<LastResponse> {
    const { request, options } = this;
    const { compactionResponse } = await import("./compact-route.js");
    const scope = await requestScope(request, options.checkpointScope);
    const { renderer, events } = await compactionResponse(options, parsed, scope, true);
    for (const event of events) this.#send(event);
    const { response } = renderer;
    if (parsed.body.store !== false) return { id: response.id };
    const previous = parsed.previousResponseId;
    const kept = input.slice(0, -1); // without the trigger
    return { id: response.id, items: [...kept, ...response.output], ...(previous === undefined ? {} : { previous }) };
  }

  /** Runs one response; its last response (to continue from) when it completed. */
  async #run(body: Record<string, unknown>, input: unknown[]): Promise<LastResponse | undefined> {
    const { request, options } = this;
    const parsed = parseResponsesRequest({ ...body, stream: true });
    assertVisible(options.registry, request.chatServeCaller, parsed.body.model);
    if (parsed.compact === true) return this.#compact(parsed, input);
    const resolved = await planResponsesRun(options, parsed, await requestScope(request, options.checkpointScope));
    const socket = this.socket;
    const client: RunClient<undefined> = {
      watch(gone) {
        socket.once("close", gone);
        return () => socket.off("close", gone);
      },
      gone: () => socket.readyState !== OPEN,
      abandoned: () => undefined,
      writable: () => whenSocketWritable(socket, options.stalledClientMs),
    };
    return runForClient(
      request,
      client,
      options,
      resolved.engine,
      async (run) => {
        const renderer = runRenderer(run, parsed, resolved, true);
        for (const event of renderer.start()) this.#send(event);
        try {
          for await (const event of observedEvents(request, options, run, streamRun(run))) {
            if (client.gone()) break;
            const events = renderer.render(event);
            if (event.kind === "final") await saveResponse(options, parsed, resolved, run, renderer);
            for (const out of events) this.#send(out);
          }
        } catch (error) {
          for (const out of renderer.fail(runErrorBody(request, client.gone(), options, run, error))) this.#send(out);
          return undefined;
        }
        const response = renderer.response;
        if (response.status === "failed") return undefined;
        if (parsed.body.store !== false) return { id: response.id };
        const previous = parsed.previousResponseId;
        return { id: response.id, items: [...input, ...response.output], ...(previous === undefined ? {} : { previous }) };
      },
      { resumeOf: parsed.resume, thread: resolved.context.thread },
    );
  }
}
