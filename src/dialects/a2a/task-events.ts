import type { Artifact, StreamResponse, TaskStatus } from "@a2a-js/sdk";
import { TaskState } from "@a2a-js/sdk";
import type { ClientEventWire } from "../../wire/response.js";
import type {
  FunctionCallItem,
  MessageItem,
  ResponseObject,
  ResponseStreamEvent,
  ResponsesExtension,
} from "../../wire/responses-response.js";
import {
  agentMessage,
  answerArtifact,
  artifactId,
  dataPart,
  interruptsOf,
  questionMessage,
  sourcesArtifact,
  status,
  type TaskIds,
  textPart,
  toolCallsArtifact,
  turnMetadata,
} from "./task-view.js";

const statusUpdate = (ids: TaskIds, taskStatus: TaskStatus, metadata?: Record<string, unknown>): StreamResponse => ({
  payload: { $case: "statusUpdate", value: { ...ids, status: taskStatus, metadata } },
});

const artifactUpdate = (ids: TaskIds, artifact: Artifact, append = false, lastChunk = false): StreamResponse => ({
  payload: { $case: "artifactUpdate", value: { ...ids, artifact, append, lastChunk, metadata: undefined } },
});

/** A progress event's line of text, when it has one. */
function progressLine(data: Record<string, unknown>): string | undefined {
  const line = data.message ?? data.stage;
  if (typeof line !== "string") return undefined;
  return typeof data.total === "number" ? `${line} (${Number(data.completed ?? 0)}/${data.total})` : line;
}

/**
 * A turn's Responses stream events (as a background run logs them) made A2A stream events:
 * statuses and progress as `working` status updates, artifacts and the answer's sources as
 * artifact updates, the answer as chunks of its artifact, and the end as the state the turn
 * leaves the task in (`input-required` with the question when the run paused).
 */
export class TaskEvents {
  #answer: string | undefined;
  #chunks = 0;
  #artifacts = 0;
  readonly #calls: FunctionCallItem[] = [];

  constructor(
    readonly ids: TaskIds,
    readonly responseId: string,
  ) {}

  next(event: ResponseStreamEvent): StreamResponse[] {
    switch (event.type) {
      case "response.in_progress": {
        const extension = event.graph_chat_serve as ResponsesExtension | undefined;
        return extension === undefined
          ? [statusUpdate(this.ids, status(TaskState.TASK_STATE_WORKING))]
          : this.#clientEvent(extension.event);
      }
      case "response.output_item.added": {
        const item = event.item as MessageItem | FunctionCallItem;
        if (item.type === "message" && item.phase === "final_answer") this.#answer = item.id;
        return [];
      }
      case "response.output_text.delta":
        if (event.item_id !== this.#answer || event.delta === "") return [];
        return [this.#chunk(String(event.delta), false)];
      case "response.output_item.done":
        return this.#itemDone(event.item as MessageItem | FunctionCallItem);
      case "response.completed":
      case "response.incomplete":
        return this.#ended(event.response as ResponseObject);
      case "response.failed": {
        const response = event.response as ResponseObject;
        const message = agentMessage(this.ids, [textPart(response.error?.message ?? "The run failed.")]);
        return [statusUpdate(this.ids, status(TaskState.TASK_STATE_FAILED, message), turnMetadata(response))];
      }
      default:
        return [];
    }
  }

  #chunk(text: string, last: boolean): StreamResponse {
    const append = this.#chunks > 0;
    this.#chunks += 1;
    return artifactUpdate(this.ids, answerArtifact(this.responseId, [textPart(text)]), append, last);
  }

  #clientEvent(event: ClientEventWire): StreamResponse[] {
    const { data } = event;
    const metadata = { event: event.type, namespace: event.namespace };
    if (event.type === "progress") {
      const line = progressLine(data);
      const parts = line === undefined ? [dataPart(data)] : [textPart(line), dataPart(data)];
      return [statusUpdate(this.ids, status(TaskState.TASK_STATE_WORKING, agentMessage(this.ids, parts)), metadata)];
    }
    if (event.type !== "artifact") return [];
    this.#artifacts += 1;
    const url = typeof data.url === "string" ? data.url : undefined;
    const name = data.title ?? data.id;
    const artifact: Artifact = {
      artifactId: artifactId(this.responseId, `artifact-${typeof data.id === "string" ? data.id : this.#artifacts}`),
      name: typeof name === "string" ? name : "artifact",
      description: "An artifact the graph made.",
      parts: [
        dataPart(data),
        ...(url === undefined
          ? []
          : [{ content: { $case: "url" as const, value: url }, metadata: undefined, filename: "", mediaType: "" }]),
      ],
      metadata,
      extensions: [],
    };
    return [artifactUpdate(this.ids, artifact)];
  }

  #itemDone(item: MessageItem | FunctionCallItem): StreamResponse[] {
    if (item.type === "function_call") {
      this.#calls.push(item);
      return [];
    }
    if (item.type !== "message") return [];
    if (item.phase === "commentary") {
      const text = item.content.map((part) => part.text).join("");
      const extension = item.graph_chat_serve;
      const metadata = extension === undefined ? undefined : { event: "status", namespace: extension.event.namespace };
      return [statusUpdate(this.ids, status(TaskState.TASK_STATE_WORKING, agentMessage(this.ids, [textPart(text)])), metadata)];
    }
    if (item.id !== this.#answer) return [];
    const events = this.#chunks > 0 ? [this.#chunk("", true)] : [];
    const sources = sourcesArtifact(
      this.responseId,
      item.content.flatMap((part) => part.annotations),
    );
    if (sources !== undefined) events.push(artifactUpdate(this.ids, sources, false, true));
    return events;
  }

  #ended(response: ResponseObject): StreamResponse[] {
    const metadata = turnMetadata(response);
    const interrupts = interruptsOf(this.#calls);
    if (interrupts !== undefined) {
      return [statusUpdate(this.ids, status(TaskState.TASK_STATE_INPUT_REQUIRED, questionMessage(this.ids, interrupts)), metadata)];
    }
    const events = this.#calls.length > 0 ? [artifactUpdate(this.ids, toolCallsArtifact(this.responseId, this.#calls), false, true)] : [];
    events.push(statusUpdate(this.ids, status(TaskState.TASK_STATE_COMPLETED), metadata));
    return events;
  }
}
