import type { BaseMessage } from "@langchain/core/messages";
import { GraphConfigurationError } from "../errors/catalogue.js";
import { ToolStatusEvents } from "../events/tool-events.js";
import { readCustomPart } from "../events/validate-event.js";
import { EventLoopTurns } from "../util/event-loop-turns.js";
import type { ClientEventWire, Usage } from "../wire/response.js";
import { batchOutput, type InterruptRun } from "./interrupts/interrupt-run.js";
import { spokenBatch } from "./interrupts/spoken-interrupts.js";
import type { AssistantOutput } from "./messages/message-out.js";
import { messageReasoning, type Reasoning } from "./messages/message-reasoning.js";
import { messageText } from "./messages/message-text.js";
import { finalOutput } from "./output-message.js";
import type { PreparedRun } from "./prepare-run.js";

/** The assistant turn a run ends with, and the usage its models reported. */
export interface RunResult {
  output: AssistantOutput;
  usage: Usage | undefined;
  /** The graph's last root state, when the run streamed (AG-UI's state and messages snapshots). */
  state?: unknown;
}

/** What a streamed run yields, in graph order. */
export type RunStreamEvent =
  | { kind: "text"; text: string }
  | ({ kind: "reasoning" } & Reasoning)
  | { kind: "event"; event: ClientEventWire }
  | ({ kind: "final" } & RunResult);

/** The end of the graph's stream: its last root state, and the text and reasoning already streamed. */
export type StreamEnd = { state: unknown; streamedText: string; streamedReasoning: string };

// LangGraph's tags for model calls that must not reach a client's stream.
const HIDDEN_TAGS = new Set(["langsmith:nostream", "langsmith:hidden", "nostream"]);

interface MessageMetadata {
  langgraph_node?: string;
  tags?: string[];
}

/**
 * Text from a listed node, or from any node inside a listed subgraph node: the stream
 * namespace names the enclosing nodes as `node:taskId`.
 */
function isStreamedAssistantText(run: PreparedRun, namespace: readonly string[], message: BaseMessage, metadata: MessageMetadata): boolean {
  if (message.type !== "ai") return false;
  const listed = run.config.streamableNodeNames;
  const fromListedNode =
    (metadata.langgraph_node !== undefined && listed.includes(metadata.langgraph_node)) ||
    namespace.some((segment) => listed.includes(segment.split(":")[0] ?? ""));
  return fromListedNode && !(metadata.tags ?? []).some((tag) => HIDDEN_TAGS.has(tag));
}

/**
 * What the run needs to hear from the graph. Model tokens only when someone reads them (a
 * stream, or an interrupt run, whose pause answers with the text said before it), client
 * events only when they go on the wire: LangGraph's `messages` mode puts a callback on every
 * runnable of the graph, which a complete response does not need to pay for.
 */
function streamModes(run: PreparedRun): ("messages" | "custom" | "values" | "tools" | "tasks")[] {
  const modes: ("messages" | "custom" | "values" | "tools" | "tasks")[] = ["values"];
  if (run.request.stream === true || run.interrupt !== undefined) modes.push("messages");
  if (run.clientEvents) modes.push("custom");
  if (run.toolEvents !== undefined) modes.push("tools");
  if (run.onStep !== undefined) modes.push("tasks");
  return modes;
}

/**
 * Text from the streamable nodes and client events as they happen, then what `finish` makes of
 * where the graph ended. One generator from the graph's stream to the run's events: a stream
 * that waits on its model holds as few suspended layers as can be.
 */
async function* streamGraph(
  run: PreparedRun,
  input: unknown,
  finish: (end: StreamEnd) => AsyncIterable<RunStreamEvent>,
): AsyncGenerator<RunStreamEvent> {
  const modes = streamModes(run);
  // Subgraph parts matter only for tokens and events from inside a subgraph node; the values
  // a complete response needs are the root graph's.
  const subgraphs = modes.length > 1;
  const stream = await run.graph.stream(input, { ...run.runConfig, streamMode: modes, subgraphs });
  let streamedText = "";
  let streamedReasoning = "";
  let state: unknown;
  let loggedInvalidEvent = false;
  const toolStatuses = run.toolEvents === undefined ? undefined : new ToolStatusEvents(run.toolEvents);
  // A graph whose parts arrive without waiting on I/O (a long scripted reply, a big state)
  // must not hold the event loop for the whole run.
  const turns = new EventLoopTurns();
  for await (const part of stream) {
    const wait = turns.take();
    if (wait !== undefined) await wait;
    const [namespace, mode, data] = (subgraphs ? part : [[], ...(part as [string, unknown])]) as [string[], string, unknown];
    if (mode === "values") {
      if (namespace.length === 0) state = data;
    } else if (mode === "messages") {
      const [message, metadata] = data as [BaseMessage, MessageMetadata];
      if (!isStreamedAssistantText(run, namespace, message, metadata)) continue;
      const reasoning = run.config.reasoning ? messageReasoning(message) : undefined;
      if (reasoning !== undefined) {
        streamedReasoning += reasoning.text;
        yield { kind: "reasoning", ...reasoning };
      }
      const text = messageText(message);
      if (text === "") continue;
      streamedText += text;
      yield { kind: "text", text };
    } else if (mode === "custom" && run.clientEvents) {
      const part = readCustomPart(data);
      if (part.kind === "event") {
        yield { kind: "event", event: part.event };
      } else if (part.kind === "invalid" && !loggedInvalidEvent) {
        // Once per run: a graph that emits a bad event usually emits many.
        loggedInvalidEvent = true;
        run.log?.warn({ model: run.model, reason: part.reason }, "dropped an invalid client event");
      }
    } else if (mode === "tasks" && run.onStep !== undefined) {
      // A task's start carries its input; its end, its result (or error).
      if (namespace.length === 0 && typeof (data as { name?: unknown }).name === "string") {
        const task = data as { name: string };
        run.onStep(task.name, "result" in task || "error" in task ? "finished" : "started");
      }
    } else if (mode === "tools" && toolStatuses !== undefined) {
      const event = toolStatuses.fromPart(namespace, data);
      if (event !== undefined) yield { kind: "event", event };
    }
  }
  for (const event of toolStatuses?.closeOpen() ?? []) yield { kind: "event", event };
  yield* finish({ state, streamedText, streamedReasoning });
}

/**
 * A graph registered with `structuredOutput` answers a JSON format with JSON: a text answer
 * that is not (and is not cut short by the token limit) is the graph failing its declaration.
 */
function assertAnswerFormat(run: PreparedRun, output: AssistantOutput): void {
  const format = run.request.parameters.responseFormat?.type;
  if (format === undefined || format === "text" || output.toolCalls.length > 0 || output.finishReason === "length") return;
  let value: unknown;
  try {
    value = JSON.parse(output.text);
  } catch {
    throw new GraphConfigurationError(`Model '${run.model}' was asked for ${format} and answered with text that is not JSON.`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GraphConfigurationError(`Model '${run.model}' was asked for ${format} and answered with JSON that is not an object.`);
  }
}

/** The part of the final text that the stream has not carried yet: what follows what it did. */
function unsent(final: string, streamed: string): string {
  return final.startsWith(streamed) ? final.slice(streamed.length) : "";
}

/**
 * The final assistant turn of a finished run. Whatever part of its text no streamable node
 * produced is sent as one more text event, so a stream always carries the complete text.
 */
async function* completion(run: PreparedRun, end: StreamEnd): AsyncGenerator<RunStreamEvent> {
  const output = await finalOutput(run.model, run.config, end.state);
  assertAnswerFormat(run, output);
  // The turn is recorded before the client hears it ended, so its next request finds it.
  await run.thread?.settle(output);
  const reasoning = output.reasoning && unsent(output.reasoning.text, end.streamedReasoning);
  if (reasoning) yield { kind: "reasoning", text: reasoning, form: output.reasoning!.form };
  const text = unsent(output.text, end.streamedText);
  if (text) yield { kind: "text", text };
  yield { kind: "final", output, usage: run.usage.usage(), state: end.state };
}

/**
 * Streams one run: assistant text and client events as they happen, then the final
 * assistant turn, or for an interrupt graph that paused, its batch of `graph_interrupt` calls.
 */
export function streamRun(run: PreparedRun): AsyncGenerator<RunStreamEvent> {
  return run.interrupt === undefined ? streamGraph(run, run.input, (end) => completion(run, end)) : streamInterruptRun(run);
}

async function* streamInterruptRun(run: PreparedRun): AsyncGenerator<RunStreamEvent> {
  const interrupt = run.interrupt!;
  const { start } = interrupt;
  if (start.kind === "replay") {
    yield* paused(interrupt, batchOutput(interrupt.runId, start.batch), "", { usage: undefined });
    return;
  }
  // Settled: the run reached a batch or its end. Anything else (an error, a client that went
  // away and closed this generator) abandons the run and deletes its checkpoint.
  let settled = false;
  try {
    yield* streamGraph(run, start.input, async function* (end) {
      const batch = await interrupt.settle();
      settled = true;
      if (batch === undefined) yield* completion(run, end);
      else yield* paused(interrupt, { ...batch, text: end.streamedText }, end.streamedText, { usage: run.usage.usage(), state: end.state });
    });
  } catch (error) {
    throw interrupt.failure(error);
  } finally {
    if (!settled) await interrupt.abandon();
  }
}

/**
 * The final event of a paused run: its batch as `graph_interrupt` calls, or told in text (the
 * part of the text not streamed yet sent first, as every final text is).
 */
async function* paused(
  interrupt: InterruptRun,
  output: AssistantOutput,
  streamedText: string,
  end: Omit<RunResult, "output">,
): AsyncGenerator<RunStreamEvent> {
  const told = interrupt.spoken ? spokenBatch(output) : output;
  const text = unsent(told.text, streamedText);
  if (told !== output && text) yield { kind: "text", text };
  yield { kind: "final", output: told, ...end };
}

/**
 * A complete (non-streamed) run: the same event stream, collected. There is no second way to
 * run a graph.
 */
export async function collectRun(run: PreparedRun): Promise<RunResult> {
  let result: RunResult | undefined;
  for await (const event of streamRun(run)) if (event.kind === "final") result = event;
  if (result === undefined) throw new Error("a run ended without its final event");
  return { output: result.output, usage: result.usage };
}
