import type { AssistantOutput } from "../../runs/messages/message-out.js";
import type { Reasoning } from "../../runs/messages/message-reasoning.js";
import type { RunStreamEvent } from "../../runs/stream-run.js";
import { copyData } from "../../util/copy-data.js";
import { type ClientEventWire, NO_USAGE, type Usage } from "../../wire/response.js";
import type { CreateResponseBody } from "../../wire/responses-request.js";
import type {
  CompactionItem,
  FunctionCallItem,
  MessageItem,
  ReasoningItem,
  ResponseObject,
  ResponseStreamEvent,
  ResponsesUsage,
  UrlCitationOut,
} from "../../wire/responses-response.js";
import { echoedSettings } from "./echoed-settings.js";
import { annotationsOf, emptyText, itemId, responsesUsage, streamEvent, textDeltaFields } from "./response-parts.js";

/**
 * Renders one run's events as a Responses API response: the typed stream events in order
 * (created, in_progress, items with their parts and deltas, exactly one terminal event), and
 * the response object they build up. A complete response is the same events, collected.
 * Item IDs and output indexes are stable from an item's `added` event to its `done`.
 */
export class ResponseRenderer {
  readonly response: ResponseObject;
  #sequence = 0;
  /** The final-answer message while its text streams. */
  #answer: { item: MessageItem; index: number } | undefined;
  /** The reasoning item while its reasoning streams. */
  #reasoning: { item: ReasoningItem; index: number } | undefined;
  /** The client asked for reasoning summaries (`reasoning.summary`): reasoning shown whole is given as one. */
  readonly #summaries: boolean;

  constructor(
    id: string,
    body: CreateResponseBody,
    /** Client events are rendered (set once the run is prepared, for a background response). */
    public clientEvents: boolean,
    /** Complete responses skip building the events: only the response object is kept. */
    private readonly streaming: boolean,
    options: { conversationId?: string; background?: boolean } = {},
  ) {
    const { conversationId } = options;
    const asked = body.reasoning?.summary ?? body.reasoning?.generate_summary;
    this.#summaries = asked !== undefined && asked !== null;
    this.response = {
      id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      completed_at: null,
      status: "in_progress",
      model: body.model,
      output: [],
      error: null,
      incomplete_details: null,
      ...echoedSettings(body),
      usage: null,
      store: body.store !== false,
      background: options.background === true,
      ...(conversationId === undefined ? {} : { conversation: { id: conversationId } }),
    };
  }

  /** An event, built only when the response streams: a complete response needs the state alone. */
  #event(type: string, fields: () => Record<string, unknown>): ResponseStreamEvent[] {
    if (!this.streaming) return [];
    return [streamEvent(type, this.#sequence++, fields())];
  }

  #snapshot(): ResponseObject {
    return copyData(this.response);
  }

  /** The events that open the stream. */
  start(): ResponseStreamEvent[] {
    return [
      ...this.#event("response.created", () => ({ response: this.#snapshot() })),
      ...this.#event("response.in_progress", () => ({ response: this.#snapshot() })),
    ];
  }

  /** A response that runs nothing (`generate: false`, a client's warm-up): created, then completed with no output. */
  empty(): ResponseStreamEvent[] {
    const opened = this.start();
    Object.assign(this.response, { status: "completed", completed_at: Math.floor(Date.now() / 1000) });
    return [...opened, ...this.#event("response.completed", () => ({ response: this.#snapshot() }))];
  }

  /** A response that compacts the conversation (`compaction_trigger`): created, its one compaction item, completed. */
  compacted(item: CompactionItem, usage: ResponsesUsage): ResponseStreamEvent[] {
    const opened = this.start();
    this.response.output.push(item);
    Object.assign(this.response, { status: "completed", completed_at: Math.floor(Date.now() / 1000), usage });
    return [
      ...opened,
      ...this.#event("response.output_item.added", () => ({ output_index: 0, item: copyData(item) })),
      ...this.#event("response.output_item.done", () => ({ output_index: 0, item: copyData(item) })),
      ...this.#event("response.completed", () => ({ response: this.#snapshot() })),
    ];
  }

  /** A background response as it is queued: `queued`, and its `response.created` event (number 0). */
  queued(): ResponseStreamEvent[] {
    this.response.status = "queued";
    return this.#event("response.created", () => ({ response: this.#snapshot() }));
  }

  /**
   * A background response as a worker starts it: `in_progress`, and its `response.in_progress`
   * event, numbered `next`: after the `response.created` its queueing sent, or, for a run a
   * worker took over, after the last event logged before.
   */
  started(next = 1): ResponseStreamEvent[] {
    this.response.status = "in_progress";
    this.#sequence = Math.max(this.#sequence, next);
    return this.#event("response.in_progress", () => ({ response: this.#snapshot() }));
  }

  /**
   * A cancelled response: what was said so far stays, unfinished items are `incomplete`, the
   * status is `cancelled`. No stream event is defined for it; the stream ends there.
   */
  cancel(): void {
    for (const open of [this.#answer, this.#reasoning]) if (open !== undefined) open.item.status = "incomplete";
    this.#answer = undefined;
    this.#reasoning = undefined;
    this.response.status = "cancelled";
  }

  /** The events of one run event. */
  render(event: RunStreamEvent): ResponseStreamEvent[] {
    if (event.kind === "text") return [...this.#closeReasoning(), ...this.#text(event.text)];
    if (event.kind === "reasoning") return this.#reason(event);
    if (event.kind === "event") return this.#clientEvent(event.event);
    return this.#final(event.output, event.usage);
  }

  #openMessage(phase: MessageItem["phase"]): { item: MessageItem; index: number; events: ResponseStreamEvent[] } {
    const item: MessageItem = { type: "message", id: itemId("msg"), role: "assistant", status: "in_progress", phase, content: [] };
    const index = this.response.output.length;
    this.response.output.push(item);
    const events = [...this.#event("response.output_item.added", () => ({ output_index: index, item: copyData(item) }))];
    item.content.push(emptyText());
    events.push(
      ...this.#event("response.content_part.added", () => ({ item_id: item.id, output_index: index, content_index: 0, part: emptyText() })),
    );
    return { item, index, events };
  }

  #closeMessage(item: MessageItem, index: number, annotations: UrlCitationOut[] = []): ResponseStreamEvent[] {
    const part = item.content[0]!;
    const events = [
      ...this.#event("response.output_text.done", () => ({
        item_id: item.id,
        output_index: index,
        content_index: 0,
        text: part.text,
        logprobs: [],
      })),
    ];
    annotations.forEach((annotation, annotationIndex) => {
      part.annotations.push(annotation);
      events.push(
        ...this.#event("response.output_text.annotation.added", () => ({
          item_id: item.id,
          output_index: index,
          content_index: 0,
          annotation_index: annotationIndex,
          annotation,
        })),
      );
    });
    item.status = "completed";
    events.push(
      ...this.#event("response.content_part.done", () => ({
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: copyData(part),
      })),
      ...this.#event("response.output_item.done", () => ({ output_index: index, item: copyData(item) })),
    );
    return events;
  }

  #delta(item: MessageItem, index: number, text: string): ResponseStreamEvent[] {
    item.content[0]!.text += text;
    return this.#event("response.output_text.delta", () => textDeltaFields(item.id, index, text));
  }

  /**
   * Text into the answer already streaming, kept as `render` keeps it, for a caller that writes
   * its `response.output_text.delta` event itself: the event's number and where it goes.
   * Undefined when the text would open or close an item first (then `render` it).
   */
  appendText(text: string): { sequence: number; itemId: string; index: number } | undefined {
    if (!this.streaming || this.#answer === undefined || this.#reasoning !== undefined) return undefined;
    const { item, index } = this.#answer;
    item.content[0]!.text += text;
    return { sequence: this.#sequence++, itemId: item.id, index };
  }

  /**
   * Reasoning streams into one reasoning item: a summary as one `summary_text` part with the
   * `reasoning_summary_*` events, raw reasoning as one `reasoning_text` content part with the
   * `reasoning_text.*` events (OpenAI's names, which its SDK's stream helper knows; Open Responses
   * names them `reasoning.*`).
   */
  #reason(reasoning: Reasoning): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    if (this.#reasoning === undefined) {
      // A client that asks for summaries (Codex) shows nothing else: reasoning the graph shows
      // whole is its own summary then.
      const asSummary = reasoning.form === "summary" || this.#summaries;
      const item: ReasoningItem = { type: "reasoning", id: itemId("rs"), status: "in_progress", summary: [] };
      if (!asSummary) item.content = [];
      const index = this.response.output.length;
      this.response.output.push(item);
      this.#reasoning = { item, index };
      events.push(...this.#event("response.output_item.added", () => ({ output_index: index, item: copyData(item) })));
      const ids = { item_id: item.id, output_index: index };
      if (asSummary) {
        item.summary.push({ type: "summary_text", text: "" });
        events.push(
          ...this.#event("response.reasoning_summary_part.added", () => ({
            ...ids,
            summary_index: 0,
            part: { type: "summary_text", text: "" },
          })),
        );
      } else {
        item.content!.push({ type: "reasoning_text", text: "" });
        events.push(
          ...this.#event("response.content_part.added", () => ({ ...ids, content_index: 0, part: { type: "reasoning_text", text: "" } })),
        );
      }
    }
    const { item, index } = this.#reasoning;
    const ids = { item_id: item.id, output_index: index };
    const summary = item.summary[0];
    if (summary !== undefined) {
      summary.text += reasoning.text;
      events.push(...this.#event("response.reasoning_summary_text.delta", () => ({ ...ids, summary_index: 0, delta: reasoning.text })));
    } else {
      item.content![0]!.text += reasoning.text;
      events.push(...this.#event("response.reasoning_text.delta", () => ({ ...ids, content_index: 0, delta: reasoning.text })));
    }
    return events;
  }

  #closeReasoning(): ResponseStreamEvent[] {
    if (this.#reasoning === undefined) return [];
    const { item, index } = this.#reasoning;
    this.#reasoning = undefined;
    const ids = { item_id: item.id, output_index: index };
    const events: ResponseStreamEvent[] = [];
    const summary = item.summary[0];
    if (summary !== undefined) {
      events.push(
        ...this.#event("response.reasoning_summary_text.done", () => ({ ...ids, summary_index: 0, text: summary.text })),
        ...this.#event("response.reasoning_summary_part.done", () => ({ ...ids, summary_index: 0, part: { ...summary } })),
      );
    } else {
      const part = item.content![0]!;
      events.push(
        ...this.#event("response.reasoning_text.done", () => ({ ...ids, content_index: 0, text: part.text })),
        ...this.#event("response.content_part.done", () => ({ ...ids, content_index: 0, part: { ...part } })),
      );
    }
    item.status = "completed";
    events.push(...this.#event("response.output_item.done", () => ({ output_index: index, item: copyData(item) })));
    return events;
  }

  #text(text: string): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    if (this.#answer === undefined) {
      const opened = this.#openMessage("final_answer");
      this.#answer = { item: opened.item, index: opened.index };
      events.push(...opened.events);
    }
    events.push(...this.#delta(this.#answer.item, this.#answer.index, text));
    return events;
  }

  /**
   * A status event is a completed commentary message of its own (hidden ones excepted); every
   * client event also rides, whole, in the `graph_chat_serve` extension: on that commentary
   * item, or for progress, artifacts and hidden statuses on a `response.in_progress` event.
   */
  #clientEvent(event: ClientEventWire): ResponseStreamEvent[] {
    if (!this.clientEvents) return [];
    const extension = { schema_version: 1 as const, event };
    const description = event.data.description;
    if (event.type === "status" && event.data.hidden !== true && typeof description === "string") {
      const reasoning = this.#closeReasoning();
      const { item, index, events } = this.#openMessage("commentary");
      item.graph_chat_serve = extension;
      events.push(...this.#delta(item, index, description), ...this.#closeMessage(item, index));
      return [...reasoning, ...events];
    }
    return [...this.#event("response.in_progress", () => ({ response: this.#snapshot(), graph_chat_serve: extension }))];
  }

  #final(output: AssistantOutput, usage: Usage | undefined): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = this.#closeReasoning();
    const annotations = annotationsOf(output);
    const needsMessage = output.text !== "" || output.toolCalls.length === 0;
    if (this.#answer === undefined && needsMessage) {
      const opened = this.#openMessage("final_answer");
      this.#answer = { item: opened.item, index: opened.index };
      events.push(...opened.events);
      if (output.text !== "") events.push(...this.#delta(opened.item, opened.index, output.text));
    }
    if (this.#answer !== undefined) {
      events.push(...this.#closeMessage(this.#answer.item, this.#answer.index, annotations));
      this.#answer = undefined;
    }
    for (const call of output.toolCalls) {
      const item: FunctionCallItem = {
        type: "function_call",
        id: itemId("fc"),
        call_id: call.id,
        name: call.function.name,
        arguments: "",
        status: "in_progress",
      };
      const index = this.response.output.length;
      this.response.output.push(item);
      events.push(...this.#event("response.output_item.added", () => ({ output_index: index, item: copyData(item) })));
      item.arguments = call.function.arguments;
      events.push(
        ...this.#event("response.function_call_arguments.delta", () => ({ item_id: item.id, output_index: index, delta: item.arguments })),
      );
      events.push(
        ...this.#event("response.function_call_arguments.done", () => ({
          item_id: item.id,
          name: item.name,
          output_index: index,
          arguments: item.arguments,
        })),
      );
      item.status = "completed";
      events.push(...this.#event("response.output_item.done", () => ({ output_index: index, item: copyData(item) })));
    }
    this.response.usage = responsesUsage(usage ?? NO_USAGE);
    this.response.completed_at = Math.floor(Date.now() / 1000);
    if (output.finishReason === "length") {
      this.response.status = "incomplete";
      this.response.incomplete_details = { reason: "max_output_tokens" };
      events.push(...this.#event("response.incomplete", () => ({ response: this.#snapshot() })));
    } else {
      this.response.status = "completed";
      events.push(...this.#event("response.completed", () => ({ response: this.#snapshot() })));
    }
    return events;
  }

  /**
   * A failure after the stream began: an `error` event with chat-serve's code, then
   * `response.failed` keeping what was already streamed.
   */
  fail(error: { type: string; code: string; message: string; param: string | null; status: number }): ResponseStreamEvent[] {
    for (const open of [this.#answer, this.#reasoning]) if (open !== undefined) open.item.status = "incomplete";
    this.#answer = undefined;
    this.#reasoning = undefined;
    this.response.status = "failed";
    this.response.error = { code: error.status === 429 ? "rate_limit_exceeded" : "server_error", message: error.message };
    return [
      // OpenAI's error event has its fields at the top; Open Responses' has them under
      // `error`, with the error's type. The event carries both.
      ...this.#event("error", () => ({
        code: error.code,
        message: error.message,
        param: error.param,
        error: { type: error.type, code: error.code, message: error.message, param: error.param },
      })),
      ...this.#event("response.failed", () => ({ response: this.#snapshot() })),
    ];
  }
}
