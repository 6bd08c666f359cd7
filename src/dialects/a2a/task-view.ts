import { randomUUID } from "node:crypto";
import { type Artifact, type Message, type Part, Role, type Task, TaskState, type TaskStatus } from "@a2a-js/sdk";
import { INTERRUPT_TOOL_NAME, type InterruptArguments } from "../../runs/interrupts/interrupt-codec.js";
import { questionText } from "../../runs/interrupts/interrupt-question.js";
import type { FunctionCallItem, MessageItem, ResponseObject, UrlCitationOut } from "../../wire/responses-response.js";

// A task as A2A shows it, read from the stored response of its latest turn: its state, the
// answer and its sources as artifacts, the question of a paused run, usage in its metadata.

/** Where a task's events and snapshots belong. */
export interface TaskIds {
  taskId: string;
  contextId: string;
}

export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "",
});
export const dataPart = (data: unknown): Part => ({
  content: { $case: "data", value: data },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

/** A message of the agent's on the task. */
export function agentMessage(ids: TaskIds, parts: Part[], metadata?: Record<string, unknown>): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId,
    taskId: ids.taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

export const status = (state: TaskState, message?: Message): TaskStatus => ({ state, message, timestamp: new Date().toISOString() });

/** The artifact ids of one turn (a response): its answer, its sources, the tool calls it asks for. */
export const artifactId = (responseId: string, what: string): string => `${responseId}-${what}`;

/** The sources the answer cites, as URL parts titled in their metadata. */
export function sourcesArtifact(responseId: string, citations: readonly UrlCitationOut[]): Artifact | undefined {
  const seen = new Map<string, string>();
  for (const citation of citations) if (!seen.has(citation.url)) seen.set(citation.url, citation.title);
  if (seen.size === 0) return undefined;
  return {
    artifactId: artifactId(responseId, "sources"),
    name: "sources",
    description: "The sources the answer cites.",
    parts: [...seen].map(([url, title]) => ({ content: { $case: "url", value: url }, metadata: { title }, filename: "", mediaType: "" })),
    metadata: undefined,
    extensions: [],
  };
}

export function answerArtifact(responseId: string, parts: Part[]): Artifact {
  return { artifactId: artifactId(responseId, "answer"), name: "answer", description: "", parts, metadata: undefined, extensions: [] };
}

/** Client tool calls the graph asks for (not interrupts), as a data artifact. */
export function toolCallsArtifact(responseId: string, calls: readonly FunctionCallItem[]): Artifact {
  return {
    artifactId: artifactId(responseId, "tool-calls"),
    name: "tool_calls",
    description: "Tool calls the graph asks its caller to make.",
    parts: [dataPart(calls.map((call) => ({ id: call.call_id, name: call.name, arguments: call.arguments })))],
    metadata: undefined,
    extensions: [],
  };
}

/** The interrupts of a paused run, read from its `graph_interrupt` calls. */
export function interruptsOf(calls: readonly FunctionCallItem[]): InterruptArguments[] | undefined {
  if (calls.length === 0 || calls.some((call) => call.name !== INTERRUPT_TOOL_NAME)) return undefined;
  return calls.map((call) => JSON.parse(call.arguments) as InterruptArguments);
}

/** The question of a paused run: a line per interrupt, then each payload as a data part. */
export function questionMessage(ids: TaskIds, interrupts: readonly InterruptArguments[]): Message {
  const text = interrupts.map((interrupt) => questionText(interrupt.payload, (value) => JSON.stringify(value))).join("\n");
  return agentMessage(ids, [textPart(text), ...interrupts.map((interrupt) => dataPart(interrupt.payload))], {
    interrupts: interrupts.length,
  });
}

/** What a turn leaves in its metadata: the model, the response it is, and its usage. */
export function turnMetadata(response: ResponseObject): Record<string, unknown> {
  return {
    model: response.model,
    response_id: response.id,
    ...(response.usage === null ? {} : { usage: response.usage }),
    ...(response.incomplete_details === null ? {} : { incomplete_details: response.incomplete_details }),
  };
}

const messages = (response: ResponseObject, phase: MessageItem["phase"]) =>
  response.output.filter((item): item is MessageItem => item.type === "message" && item.phase === phase);

/** The state a stored response puts its task in, and the message that goes with it. */
function stateOf(ids: TaskIds, response: ResponseObject, calls: readonly FunctionCallItem[]): TaskStatus {
  switch (response.status) {
    case "queued":
      return status(TaskState.TASK_STATE_SUBMITTED);
    case "in_progress":
      return status(TaskState.TASK_STATE_WORKING);
    case "cancelled":
      return status(TaskState.TASK_STATE_CANCELED);
    case "failed":
      return status(TaskState.TASK_STATE_FAILED, agentMessage(ids, [textPart(response.error?.message ?? "The run failed.")]));
    default: {
      const interrupts = interruptsOf(calls);
      return interrupts === undefined
        ? status(TaskState.TASK_STATE_COMPLETED)
        : status(TaskState.TASK_STATE_INPUT_REQUIRED, questionMessage(ids, interrupts));
    }
  }
}

/** The task a stored response shows (its latest turn), with the client's messages as its history. */
export function taskOf(ids: TaskIds, response: ResponseObject, options: { canceled: boolean; history: Message[] }): Task {
  const calls = response.output.filter((item): item is FunctionCallItem => item.type === "function_call");
  const artifacts: Artifact[] = [];
  const answers = messages(response, "final_answer");
  const text = answers.flatMap((item) => item.content.map((part) => part.text)).join("");
  if (text !== "") artifacts.push(answerArtifact(response.id, [textPart(text)]));
  const sources = sourcesArtifact(
    response.id,
    answers.flatMap((item) => item.content.flatMap((part) => part.annotations)),
  );
  if (sources !== undefined) artifacts.push(sources);
  if (calls.length > 0 && interruptsOf(calls) === undefined) artifacts.push(toolCallsArtifact(response.id, calls));
  return {
    id: ids.taskId,
    contextId: ids.contextId,
    status: options.canceled ? status(TaskState.TASK_STATE_CANCELED) : stateOf(ids, response, calls),
    artifacts,
    history: options.history,
    metadata: turnMetadata(response),
  };
}

/** States a task no longer leaves. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
