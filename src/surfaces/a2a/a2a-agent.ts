import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type AgentCard,
  type CancelTaskRequest,
  type GetTaskRequest,
  Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  TaskState,
  taskStateToJSON,
} from "@a2a-js/sdk";
import {
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { BackgroundRuns } from "../../background/background-runs.js";
import { messageText, resumeItems, settingsOf } from "../../dialects/a2a/message-input.js";
import { TaskEvents } from "../../dialects/a2a/task-events.js";
import { interruptsOf, type TaskIds, TERMINAL_STATES, taskOf } from "../../dialects/a2a/task-view.js";
import { parseResponsesRequest } from "../../dialects/responses/parse-responses-request.js";
import { storeCall } from "../../dialects/responses/stored-context.js";
import { isServeError } from "../../errors/serve-error.js";
import { TERMINAL } from "../../http/background-routes.js";
import { type RunRouteOptions, requestScope, sharesAgentStore } from "../../http/run-request.js";
import { expirePausedRun } from "../../runs/interrupts/expire-paused.js";
import type { TaskRecord } from "../../store/a2a-tasks.js";
import type { FunctionCallItem, ResponseObject } from "../../wire/responses-response.js";

/** The HTTP request a JSON-RPC call came on, kept in the SDK's call context. */
export interface A2aCall {
  request: FastifyRequest;
  reply: FastifyReply;
  /** Aborts when the client leaves: a stream or a wait ends, never the task. */
  signal: AbortSignal;
}

const CALL = "chat-serve.call";

export function setCall(context: ServerCallContext, call: A2aCall): void {
  context.state.set(CALL, call);
}

function callOf(context: ServerCallContext): A2aCall {
  return context.state.get(CALL) as A2aCall;
}

export type A2aAgentOptions = RunRouteOptions & { background: BackgroundRuns };

const calls = (response: ResponseObject) => response.output.filter((item): item is FunctionCallItem => item.type === "function_call");
const stateName = (state: TaskState) => taskStateToJSON(state).replace("TASK_STATE_", "").toLowerCase().replace("_", "-");
const isFinal = (event: StreamResponse) =>
  event.payload?.$case === "statusUpdate" &&
  (TERMINAL_STATES.has(event.payload.value.status!.state) || event.payload.value.status!.state === TaskState.TASK_STATE_INPUT_REQUIRED);

/** A run's error as the A2A error a client can act on; a server fault stays an internal error. */
function a2aError(error: unknown): unknown {
  if (!isServeError(error)) return error;
  if (error.status === 409) return new UnsupportedOperationError(error.message);
  if (error.status < 500) return new RequestMalformedError(error.message);
  return new Error(error.message);
}

/**
 * One model as an A2A agent. A task's turns are background responses: the first runs the
 * message, each later one answers the question its run paused on. They run on the queue, so
 * any process can report, follow or cancel a task; the task's record says which response is
 * its latest turn.
 */
export class A2aAgent implements A2ARequestHandler {
  constructor(
    readonly model: string,
    readonly options: A2aAgentOptions,
    readonly card: AgentCard,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError("This agent has no extended card: its public card says everything.");
  }

  get #store() {
    return this.options.registry.store;
  }

  #call<T>(operation: () => Promise<T>): Promise<T> {
    return storeCall(this.options.backendTimeoutMs, operation);
  }

  async #task(scope: string, id: unknown): Promise<TaskRecord> {
    // A 0.3 client's params reach here as they were sent: the id may be missing or not a string.
    if (typeof id !== "string")
      throw new RequestMalformedError("The task id is missing: give the id (a string) of a task this agent started.");
    if (id.trim() === "") throw new RequestMalformedError("The task id is empty: give the id of a task this agent started.");
    const record = await this.#call(() => this.#store.tasks.get(scope, id));
    if (record === undefined || record.model !== this.model) {
      throw new TaskNotFoundError(`There is no task ${id} here: it never existed, it expired, or it belongs to another caller.`);
    }
    return record;
  }

  /** The latest turn of a task, as stored; undefined while an answer to its question is being queued. */
  async #turn(record: TaskRecord): Promise<ResponseObject | undefined> {
    if (record.responseId.startsWith("answering-")) return undefined;
    const stored = await this.#call(() => this.#store.getResponse(record.scope, record.responseId));
    if (stored === undefined) throw new TaskNotFoundError(`Task ${record.id} is no longer stored: it expired.`);
    return stored.response as unknown as ResponseObject;
  }

  #snapshot(record: TaskRecord, response: ResponseObject | undefined, historyLength?: number): Task {
    const ids: TaskIds = { taskId: record.id, contextId: record.contextId };
    const all = record.history.map((message) => Message.fromJSON(message));
    const history = historyLength === undefined ? all : historyLength <= 0 ? [] : all.slice(-historyLength);
    if (response !== undefined) return taskOf(ids, response, { canceled: record.canceled, history });
    const working = { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() };
    return { id: record.id, contextId: record.contextId, status: working, artifacts: [], history, metadata: { model: this.model } };
  }

  async #current(scope: string, id: string, historyLength?: number): Promise<Task> {
    const record = await this.#task(scope, id);
    return this.#snapshot(record, await this.#turn(record), historyLength);
  }

  /** Queues a turn as a background response (checked first, as any request is). */
  async #submit(call: A2aCall, scope: string, body: Record<string, unknown>): Promise<ResponseObject> {
    try {
      const parsed = parseResponsesRequest(body);
      const caller = call.request.chatServeCaller;
      const submitted = await this.options.background.submit(parsed, {
        scope,
        ...(caller?.tenant === undefined ? {} : { tenant: caller.tenant }),
        ...(caller?.authUser === undefined ? {} : { authUser: caller.authUser }),
        ...(sharesAgentStore(call.request, this.options.checkpointScope) ? { storeScope: "default" } : {}),
        requestId: call.request.chatServeRequestId,
        body,
      });
      return submitted.response;
    } catch (error) {
      throw a2aError(error);
    }
  }

  /** The latest turn of a context that ended with an answer, which a new task in it continues. */
  async #lastAnswer(scope: string, contextId: string): Promise<string | undefined> {
    for (const task of await this.#call(() => this.#store.tasks.inContext(scope, contextId, 20))) {
      if (task.model !== this.model || task.canceled) continue;
      const response = await this.#turn(task).catch(() => undefined);
      if (response !== undefined && TERMINAL.has(response.status) && response.status !== "failed" && response.status !== "cancelled") {
        if (interruptsOf(calls(response)) === undefined) return response.id;
      }
    }
    return undefined;
  }

  /** Starts a task, or answers the question of one: the turn queued, and the task it belongs to. */
  async #start(params: SendMessageRequest, context: ServerCallContext): Promise<{ record: TaskRecord; response: ResponseObject }> {
    const call = callOf(context);
    const message = params.message;
    const scope = await requestScope(call.request, this.options.checkpointScope);
    const settings = settingsOf(params.metadata, message?.metadata);
    const base = {
      model: this.model,
      background: true,
      stream: true,
      store: true,
      metadata: { graph_stream_events: "v1", ...(settings === undefined ? {} : { graph_runtime_settings: JSON.stringify(settings) }) },
    };
    if (message !== undefined && message.taskId !== "") return this.#answer(call, scope, message, base);
    const input = messageText(message);
    const contextId = message!.contextId === "" ? randomUUID() : message!.contextId;
    const previous = message!.contextId === "" ? undefined : await this.#lastAnswer(scope, contextId);
    const response = await this.#submit(call, scope, {
      ...base,
      input,
      ...(previous === undefined ? {} : { previous_response_id: previous }),
    });
    const now = new Date();
    const id = randomUUID();
    const record: TaskRecord = {
      id,
      scope,
      model: this.model,
      contextId,
      responseId: response.id,
      canceled: false,
      history: [Message.toJSON({ ...message!, taskId: id, contextId }) as Record<string, unknown>],
      createdAt: now,
      updatedAt: now,
    };
    await this.#call(() => this.#store.tasks.create(record));
    return { record, response };
  }

  /** A message on a task: the answer to the question its run paused on, which resumes the run. */
  async #answer(call: A2aCall, scope: string, message: Message, base: Record<string, unknown>) {
    const record = await this.#task(scope, message.taskId);
    if (message.contextId !== "" && message.contextId !== record.contextId) {
      throw new RequestMalformedError(`Task ${record.id} is in context ${record.contextId}, not ${message.contextId}.`);
    }
    const response = await this.#turn(record);
    const state = this.#snapshot(record, response).status!.state;
    if (state !== TaskState.TASK_STATE_INPUT_REQUIRED || response === undefined) {
      throw new UnsupportedOperationError(
        TERMINAL_STATES.has(state)
          ? `Task ${record.id} has ended (${stateName(state)}): start a new task (leave taskId out; keep the contextId to continue the context).`
          : `Task ${record.id} is ${stateName(state)}, not waiting for input: answer it when it asks (input-required), or cancel it.`,
      );
    }
    // The task is moved to a placeholder first, so of two answers to one question only one runs.
    const placeholder = `answering-${randomUUID()}`;
    if (!(await this.#call(() => this.#store.tasks.advance(scope, record.id, record.responseId, { responseId: placeholder })))) {
      throw new UnsupportedOperationError(`Task ${record.id}'s question was answered by another message first.`);
    }
    let resumed: ResponseObject;
    try {
      const input = resumeItems(message, calls(response));
      resumed = await this.#submit(call, scope, { ...base, input, previous_response_id: response.id });
    } catch (error) {
      await this.#call(() => this.#store.tasks.advance(scope, record.id, placeholder, { responseId: record.responseId }));
      throw error;
    }
    const json = Message.toJSON({ ...message, contextId: record.contextId }) as Record<string, unknown>;
    await this.#call(() => this.#store.tasks.advance(scope, record.id, placeholder, { responseId: resumed.id, message: json }));
    return { record: { ...record, responseId: resumed.id, history: [...record.history, json] }, response: resumed };
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const { record, response } = await this.#start(params, context);
    const historyLength = params.configuration?.historyLength;
    if (params.configuration?.returnImmediately === true) return this.#snapshot(record, response, historyLength);
    // Blocking: the turn's events are followed to its end (or its question), then the task read.
    for await (const _ of this.#follow(record, response.id, -1, callOf(context).signal));
    return this.#current(record.scope, record.id, historyLength);
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const { record, response } = await this.#start(params, context);
    yield { payload: { $case: "task", value: this.#snapshot(record, response) } };
    yield* this.#follow(record, response.id, -1, callOf(context).signal);
  }

  /**
   * A turn's events as A2A events, those up to `quietUntil` read but not sent (a resubscriber
   * has them in the task it was given). A turn whose log ends without a final state (it was
   * cancelled) ends with the state it is in.
   */
  async *#follow(record: TaskRecord, responseId: string, quietUntil: number, signal: AbortSignal): AsyncGenerator<StreamResponse> {
    const projection = new TaskEvents({ taskId: record.id, contextId: record.contextId }, responseId);
    const from = await this.options.background.events(responseId, -1, signal);
    let ended = false;
    if (from.kind === "events") {
      for await (const event of from.events) {
        for (const out of projection.next(event)) {
          ended ||= isFinal(out);
          if (event.sequence_number > quietUntil) yield out;
        }
      }
    }
    if (ended || signal.aborted) return;
    const task = await this.#current(record.scope, record.id, 0);
    yield {
      payload: {
        $case: "statusUpdate",
        value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata },
      },
    };
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const scope = await requestScope(callOf(context).request, this.options.checkpointScope);
    return this.#current(scope, params.id, params.historyLength);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const scope = await requestScope(callOf(context).request, this.options.checkpointScope);
    const record = await this.#task(scope, params.id);
    const response = await this.#turn(record);
    const state = this.#snapshot(record, response).status!.state;
    if (TERMINAL_STATES.has(state)) {
      throw new TaskNotCancelableError(`Task ${record.id} has already ended (${stateName(state)}); there is nothing to cancel.`);
    }
    if (response === undefined) throw new TaskNotCancelableError(`Task ${record.id} is being answered right now; cancel it once it runs.`);
    const interrupts = state === TaskState.TASK_STATE_INPUT_REQUIRED ? interruptsOf(calls(response)) : undefined;
    if (interrupts !== undefined) {
      // Nothing runs: the paused run is ended, as one whose time to answer ran out.
      await expirePausedRun(this.options, scope, this.model, interrupts[0]!.run_id);
      await this.#call(() => this.#store.tasks.advance(scope, record.id, record.responseId, { canceled: true }));
      return this.#current(scope, record.id);
    }
    await this.options.background.cancel(response.id);
    // The worker saves the turn as cancelled; wait for that, within a bound.
    const deadline = Date.now() + Math.max(5_000, this.options.backendTimeoutMs);
    for (;;) {
      const task = await this.#current(scope, record.id);
      if (TERMINAL_STATES.has(task.status!.state) || Date.now() > deadline) return task;
      await sleep(25);
    }
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const call = callOf(context);
    const scope = await requestScope(call.request, this.options.checkpointScope);
    const record = await this.#task(scope, params.id);
    const response = await this.#turn(record);
    const task = this.#snapshot(record, response);
    const state = task.status!.state;
    if (TERMINAL_STATES.has(state)) {
      throw new UnsupportedOperationError(`Task ${record.id} has ended (${stateName(state)}): read it with GetTask.`);
    }
    // Events logged before now are in the task as stored; the stream goes on from there.
    const last = response === undefined ? -1 : await this.#call(() => this.options.background.lastEvent(response.id));
    yield { payload: { $case: "task", value: task } };
    if (state === TaskState.TASK_STATE_INPUT_REQUIRED || response === undefined) return;
    yield* this.#follow(record, response.id, last, call.signal);
  }

  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError("This agent does not list tasks: keep the ids of the tasks you start, and read each with GetTask.");
  }

  async createTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError("This agent sends no push notifications: stream the task, or poll it with GetTask.");
  }

  getTaskPushNotificationConfig = this.createTaskPushNotificationConfig;
  listTaskPushNotificationConfigs = this.createTaskPushNotificationConfig;
  deleteTaskPushNotificationConfig = this.createTaskPushNotificationConfig;
}
