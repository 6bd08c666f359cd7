import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { elicitationFor, elicitedAnswer } from "../../dialects/mcp/elicitation.js";
import {
  answerResult,
  declinedResult,
  failedResult,
  interruptResult,
  type ResourceLink,
  type ToolResult,
} from "../../dialects/mcp/tool-results.js";
import { type McpTool, readModelArguments, readResumeArguments, ToolArgumentsError } from "../../dialects/mcp/tool-schemas.js";
import { engineRequest, type ParsedResponsesRequest, parseResponsesRequest } from "../../dialects/responses/parse-responses-request.js";
import { responseId } from "../../dialects/responses/response-id.js";
import { ResponseRenderer } from "../../dialects/responses/response-renderer.js";
import { planResponsesRun, type ResolvedRequest, saveResponse } from "../../dialects/responses/responses-run.js";
import { InvalidRequestError } from "../../errors/catalogue.js";
import { toServeError } from "../../errors/to-serve-error.js";
import { observedEvents, type RunExtras, type RunRouteOptions, requestScope, runForRequest } from "../../http/run-request.js";
import { GraphFeature } from "../../registry/features.js";
import { expirePausedRun } from "../../runs/interrupts/expire-paused.js";
import { decodeBatch } from "../../runs/interrupts/interrupt-codec.js";
import type { ResumeOf } from "../../runs/interrupts/interrupt-run.js";
import type { AssistantOutput } from "../../runs/messages/message-out.js";
import { streamRun } from "../../runs/stream-run.js";
import type { ChatCompletionRequest } from "../../wire/request.js";
import type { ClientEventWire, Usage } from "../../wire/response.js";

/** The HTTP request that carried a call (in a session, each call comes on a request of its own). */
export interface CarriedBy {
  request: FastifyRequest;
  reply: FastifyReply;
}

/** What one `tools/call` runs with. */
export interface McpCall {
  options: RunRouteOptions;
  carrier: CarriedBy;
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
  /** The tool's name, and the model it runs. */
  tool: string;
  model: string;
  /** The client declared elicitation: a paused run asks inside the call. */
  canElicit: boolean;
  /** How long a question waits for its answer before the call returns the paused run. */
  elicitationTimeoutMs: number;
  /** False when the client set a log level above `info`. */
  logs: boolean;
}

/** One run of a call, to its end or its pause. */
interface Segment {
  output: AssistantOutput;
  usage: Usage | undefined;
}

/** A call that ended because its client went away or cancelled it: nobody reads its result. */
class CallCancelled extends Error {}

/** Sends a notification on the call's stream; a stream already gone drops it (the run is stopped by then). */
async function notify(call: McpCall, notification: ServerNotification): Promise<void> {
  try {
    await call.extra.sendNotification(notification);
  } catch {
    // The client went away: its run is aborted through the request's close.
  }
}

/** What a status or progress event says, in a line. */
function eventLine(event: ClientEventWire): string | undefined {
  const { data } = event;
  if (event.type === "status") return data.hidden === true ? undefined : String(data.description ?? "");
  if (event.type === "progress") {
    const count = typeof data.total === "number" ? ` (${Number(data.completed ?? 0)}/${data.total})` : "";
    return `${String(data.message ?? data.stage ?? "Working")}${count}`;
  }
  const name = String(data.title ?? data.id ?? "an artifact");
  return typeof data.url === "string" ? `Made ${name}: ${data.url}` : `Made ${name}`;
}

/**
 * The run's client events as MCP sees them: each status and progress event a progress
 * notification (when the client sent a progress token) and a log line; an artifact with a URL
 * becomes a link in the result.
 */
class EventRelay {
  #progress = 0;
  readonly artifacts: ResourceLink[] = [];

  constructor(private readonly call: McpCall) {}

  async relay(event: ClientEventWire): Promise<void> {
    const line = eventLine(event);
    if (event.type === "artifact" && typeof event.data.url === "string") {
      this.artifacts.push({
        type: "resource_link",
        uri: event.data.url,
        name: String(event.data.title ?? event.data.id ?? event.data.url),
        description: "An artifact the graph made.",
      });
    }
    if (line === undefined) return;
    const token = this.call.extra._meta?.progressToken;
    if (token !== undefined && event.type !== "artifact") {
      this.#progress += 1;
      await notify(this.call, {
        method: "notifications/progress",
        params: { progressToken: token, progress: this.#progress, message: line },
      });
    }
    if (this.call.logs) {
      await notify(this.call, {
        method: "notifications/message",
        params: { level: "info", logger: this.call.tool, data: { message: line, event: { type: event.type, data: event.data } } },
      });
    }
  }
}

/** What a first run stores when it continues a conversation. */
interface Saving {
  parsed: ParsedResponsesRequest;
  resolved: ResolvedRequest;
}

/** Runs the graph once (a start, or a resume) behind the call's HTTP request, relaying its events. */
async function runSegment(
  call: McpCall,
  relay: EventRelay,
  engine: ChatCompletionRequest,
  extras: RunExtras,
  saving?: Saving,
): Promise<Segment> {
  const { request, reply } = call.carrier;
  const result = await runForRequest(
    request,
    reply,
    call.options,
    engine,
    async (run): Promise<Segment> => {
      const renderer =
        saving === undefined
          ? undefined
          : new ResponseRenderer(
              run.interrupt === undefined ? saving.resolved.plannedId : responseId(run.interrupt.runId),
              saving.parsed.body,
              run.clientEvents,
              false,
              saving.parsed.conversationId === undefined ? {} : { conversationId: saving.parsed.conversationId },
            );
      let final: Segment | undefined;
      for await (const event of observedEvents(request, call.options, run, streamRun(run))) {
        renderer?.render(event);
        if (event.kind === "event") await relay.relay(event.event);
        if (event.kind !== "final") continue;
        if (saving !== undefined && renderer !== undefined) await saveResponse(call.options, saving.parsed, saving.resolved, run, renderer);
        final = { output: event.output, usage: event.usage };
      }
      if (final === undefined) throw new Error("a run ended without its final event");
      return final;
    },
    { ...extras, signal: call.extra.signal },
  );
  if ((result as unknown) === reply) throw new CallCancelled();
  return result as Segment;
}

/** The request a call's runs share: its settings, and client events when the model sends some. */
function callBody(call: McpCall, input: string, settings?: Record<string, unknown>, conversation?: string): ParsedResponsesRequest {
  const config = call.options.registry.getGraph(call.model);
  return parseResponsesRequest({
    model: call.model,
    input,
    // Client events reach only a streamed run; the stream itself goes nowhere but the relay.
    stream: config.features.has(GraphFeature.CLIENT_EVENTS),
    store: conversation !== undefined,
    metadata: {
      graph_stream_events: "v1",
      ...(settings === undefined ? {} : { graph_runtime_settings: JSON.stringify(settings) }),
    },
    ...(conversation === undefined ? {} : { conversation }),
  });
}

/** Adds the model's summed usage of two segments. */
function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

/**
 * A run that paused: with elicitation, each question is asked inside the call and the
 * answers resume the run, until it ends; `decline` ends the run there, `cancel` (or no answer
 * in time) returns the paused run for the `resume` tool. Without elicitation, the paused run
 * is the result.
 */
async function settle(call: McpCall, relay: EventRelay, body: ParsedResponsesRequest, first: Segment): Promise<ToolResult> {
  let segment = first;
  let usage = first.usage;
  for (;;) {
    const calls = decodeBatch(segment.output.toolCalls);
    if (calls === undefined) return answerResult(segment.output, usage, relay.artifacts);
    const paused = () => interruptResult(call.tool, segment.output, calls, usage, relay.artifacts);
    if (!call.canElicit) return paused();
    const { run_id: runId, state_token: stateToken } = calls[0]!;
    const answers: { toolCallId: string; value: unknown }[] = [];
    for (const [index, interrupt] of calls.entries()) {
      let result: { action: string; content?: Record<string, unknown> };
      try {
        result = await call.extra.sendRequest(
          { method: "elicitation/create", params: elicitationFor(interrupt.payload, { index, count: calls.length }) },
          ElicitResultSchema,
          { timeout: call.elicitationTimeoutMs, signal: call.extra.signal },
        );
      } catch (error) {
        if (call.extra.signal.aborted) throw new CallCancelled();
        // No answer in time, or a client that could not ask: the run stays paused for `resume`.
        call.carrier.request.log.info({ err: error, runId }, "an MCP elicitation got no answer; the call returns the paused run");
        return paused();
      }
      if (result.action === "cancel") return paused();
      if (result.action === "decline") {
        await expire(call, runId);
        return declinedResult(segment.output, usage);
      }
      answers.push({ toolCallId: segment.output.toolCalls[index]!.id, value: elicitedAnswer(result.content, interrupt.payload) });
    }
    const resumeOf: ResumeOf = { runId, stateToken, answers };
    segment = await runSegment(call, relay, engineRequest(body.body, []), { resumeOf });
    usage = addUsage(usage, segment.usage);
  }
}

/** Ends a paused run whose question was declined: as if its time to answer had run out. */
async function expire(call: McpCall, runId: string): Promise<void> {
  const scope = await requestScope(call.carrier.request, call.options.checkpointScope);
  await expirePausedRun(call.options, scope, call.model, runId);
}

/** Runs a call to completion, or says why it failed as the tool's error (never a protocol error). */
async function guarded(call: McpCall, work: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ToolArgumentsError) return failedResult(new InvalidRequestError(error.message, { param: "arguments" }));
    if (error instanceof CallCancelled || call.extra.signal.aborted) {
      // Nobody reads this: the SDK sends no result for a cancelled request.
      return failedResult(toServeError(new Error("The call was cancelled.")));
    }
    const serveError = toServeError(error);
    call.options.metrics?.error(serveError.code);
    if (serveError.status >= 500) call.carrier.request.log.error({ err: error, tool: call.tool }, "an MCP tool call failed");
    return failedResult(serveError);
  }
}

/** A model's tool: the message (with settings, and a conversation to continue) run as the model. */
export function callModelTool(call: McpCall, tool: McpTool, rawArguments: unknown): Promise<ToolResult> {
  return guarded(call, async () => {
    const args = readModelArguments(tool, rawArguments);
    const body = callBody(call, args.message, args.settings, args.conversation);
    const scope = await requestScope(call.carrier.request, call.options.checkpointScope);
    const resolved = await planResponsesRun(call.options, body, scope);
    const relay = new EventRelay(call);
    const first = await runSegment(call, relay, resolved.engine, { thread: resolved.context.thread }, { parsed: body, resolved });
    return settle(call, relay, body, first);
  });
}

/** The `resume` tool: the answer to a paused run's question, and the run goes on (and may pause again). */
export function callResumeTool(
  call: Omit<McpCall, "tool" | "model">,
  models: ReadonlyMap<string, string>,
  rawArguments: unknown,
): Promise<ToolResult> {
  const failing = { ...call, tool: "resume", model: "" };
  return guarded(failing, async () => {
    const args = readResumeArguments(rawArguments);
    const model = models.get(args.tool);
    if (model === undefined) {
      throw new InvalidRequestError(`There is no tool '${args.tool}' here; give the tool whose run paused (interrupt.tool).`, {
        param: "tool",
      });
    }
    const resumed: McpCall = { ...call, tool: args.tool, model };
    const body = callBody(resumed, "", undefined);
    const relay = new EventRelay(resumed);
    const resumeOf: ResumeOf = { runId: args.runId, stateToken: args.stateToken, reply: args.answer };
    const first = await runSegment(resumed, relay, engineRequest(body.body, []), { resumeOf });
    return settle(resumed, relay, body, first);
  });
}
