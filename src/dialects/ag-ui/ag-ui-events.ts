import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { protocolJson } from "../../runs/agent/agent-graph.js";
import { INTERRUPT_TOOL_NAME } from "../../runs/interrupts/interrupt-codec.js";
import { readQuestion } from "../../runs/interrupts/interrupt-question.js";
import type { RunStreamEvent } from "../../runs/stream-run.js";
import { interruptId } from "./parse-run-input.js";

// A run's events as AG-UI 1.0 events (SSE `data:` frames): the run lifecycle, text and reasoning
// messages, client events as CUSTOM events, the frontend's tool calls, the answer's citations as
// a CUSTOM `citations` event, and at the end the graph's state (without LangGraph's own
// `__interrupt__`) and messages as snapshots; a pause ends the run with the `interrupt` outcome.

/** A node of the root graph starting or finishing: AG-UI's steps. */
export interface StepEvent {
  kind: "step";
  node: string;
  phase: "started" | "finished";
}

/** An AG-UI event (`@ag-ui/core`'s `Event`, the kinds this server sends). */
export type AgUiEvent = { type: string } & Record<string, unknown>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The graph's messages as AG-UI messages: what MESSAGES_SNAPSHOT carries. */
function agUiMessages(messages: readonly BaseMessage[]): Record<string, unknown>[] {
  return messages.flatMap((message): Record<string, unknown>[] => {
    const id = message.id ?? `msg_${randomUUID()}`;
    const content = message.text;
    switch (message.getType()) {
      case "human":
        return [{ id, role: "user", content }];
      case "system":
        return [{ id, role: "system", content }];
      case "tool":
        return [{ id, role: "tool", content, toolCallId: (message as unknown as { tool_call_id: string }).tool_call_id }];
      case "ai": {
        const calls = ((message as unknown as { tool_calls?: { id?: string; name: string; args: unknown }[] }).tool_calls ?? []).map(
          (call) => ({
            id: call.id ?? `call_${randomUUID()}`,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
          }),
        );
        return [{ id, role: "assistant", ...(content === "" ? {} : { content }), ...(calls.length === 0 ? {} : { toolCalls: calls }) }];
      }
      default:
        return [];
    }
  });
}

/** LangGraph's own keys in a state (`__interrupt__`): not the graph's values. */
const INTERNAL_KEY = /^__.+__$/u;

/** The snapshots of the graph's last state: its values but messages (and LangGraph's own keys), and its messages. */
function snapshots(state: unknown): AgUiEvent[] {
  if (!isRecord(state)) return [];
  const { messages, ...all } = state;
  const values = Object.fromEntries(Object.entries(all).filter(([key]) => !INTERNAL_KEY.test(key)));
  const events: AgUiEvent[] = [{ type: "STATE_SNAPSHOT", snapshot: JSON.parse(protocolJson(values)) as unknown }];
  if (Array.isArray(messages)) events.push({ type: "MESSAGES_SNAPSHOT", messages: agUiMessages(messages as BaseMessage[]) });
  return events;
}

/** The events of one run, built as it goes. */
export function agUiEvents(run: { threadId: string; runId: string }): {
  first: AgUiEvent[];
  of(event: RunStreamEvent | StepEvent): AgUiEvent[];
  fail(message: string, code: string): AgUiEvent[];
} {
  let text: string | undefined;
  let reasoning: string | undefined;
  const closeReasoning = (): AgUiEvent[] => {
    if (reasoning === undefined) return [];
    const id = reasoning;
    reasoning = undefined;
    return [
      { type: "REASONING_MESSAGE_END", messageId: id },
      { type: "REASONING_END", messageId: id },
    ];
  };
  const close = (): AgUiEvent[] => {
    const closing = closeReasoning();
    if (text !== undefined) closing.push({ type: "TEXT_MESSAGE_END", messageId: text });
    text = undefined;
    return closing;
  };
  return {
    first: [{ type: "RUN_STARTED", threadId: run.threadId, runId: run.runId, protocolVersion: "1.0" }],
    of(event) {
      switch (event.kind) {
        case "step":
          return [{ type: event.phase === "started" ? "STEP_STARTED" : "STEP_FINISHED", stepName: event.node }];
        case "text": {
          const events = closeReasoning();
          if (text === undefined) {
            text = `msg_${randomUUID()}`;
            events.push({ type: "TEXT_MESSAGE_START", messageId: text, role: "assistant" });
          }
          if (event.text !== "") events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: text, delta: event.text });
          return events;
        }
        case "reasoning": {
          const events: AgUiEvent[] = [];
          if (reasoning === undefined) {
            reasoning = `reasoning_${randomUUID()}`;
            events.push(
              { type: "REASONING_START", messageId: reasoning },
              { type: "REASONING_MESSAGE_START", messageId: reasoning, role: "reasoning" },
            );
          }
          if (event.text !== "") events.push({ type: "REASONING_MESSAGE_CONTENT", messageId: reasoning, delta: event.text });
          return events;
        }
        case "event":
          // Status, progress and artifacts have no event of AG-UI's own: CUSTOM, named by their type.
          return [{ type: "CUSTOM", name: event.event.type, value: { ...event.event.data, namespace: event.event.namespace } }];
        case "final": {
          const events = close();
          const pauses = event.output.toolCalls.filter((call) => call.function.name === INTERRUPT_TOOL_NAME);
          const frontend = event.output.toolCalls.filter((call) => call.function.name !== INTERRUPT_TOOL_NAME);
          const parent = `msg_${randomUUID()}`;
          for (const call of frontend) {
            events.push(
              { type: "TOOL_CALL_START", toolCallId: call.id, toolCallName: call.function.name, parentMessageId: parent },
              { type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: call.function.arguments },
              { type: "TOOL_CALL_END", toolCallId: call.id },
            );
          }
          // AG-UI has no event for citations: a CUSTOM one, named `citations`, after the answer's text.
          if (event.output.annotations.length > 0) {
            const citations = event.output.annotations.map(({ url_citation: citation }) => ({
              url: citation.url,
              title: citation.title,
              startIndex: citation.start_index,
              endIndex: citation.end_index,
            }));
            events.push({ type: "CUSTOM", name: "citations", value: { citations } });
          }
          events.push(...snapshots(event.state));
          if (pauses.length > 0) {
            const interrupts = pauses.map((call) => {
              let args: { run_id?: string; state_token?: string; payload?: unknown } = {};
              try {
                args = JSON.parse(call.function.arguments) as typeof args;
              } catch {}
              const payload = args.payload;
              const message = readQuestion(payload).question;
              return {
                id: interruptId(call.id, args.run_id ?? "", args.state_token ?? ""),
                reason: "graph_interrupt",
                ...(message === undefined ? {} : { message }),
                metadata: { payload: payload ?? null },
              };
            });
            events.push({ type: "RUN_FINISHED", threadId: run.threadId, runId: run.runId, outcome: { type: "interrupt", interrupts } });
          } else {
            events.push({
              type: "RUN_FINISHED",
              threadId: run.threadId,
              runId: run.runId,
              outcome: { type: "success", ...(frontend.length === 0 ? {} : { pendingToolCallIds: frontend.map((call) => call.id) }) },
            });
          }
          return events;
        }
      }
    },
    fail(message, code) {
      return [...close(), { type: "RUN_ERROR", message, code }];
    },
  };
}
