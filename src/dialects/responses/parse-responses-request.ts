import type { z } from "zod";
import { InvalidRequestError, UnknownParameterError, UnsupportedParameterError } from "../../errors/catalogue.js";
import { answerValue, type ResumeAnswer } from "../../runs/interrupts/resume-request.js";
import { asksInText } from "../../runs/interrupts/spoken-interrupts.js";
import { describeFirstIssue, firstIssue, issuePath } from "../../util/describe-issue.js";
import { presentFieldsParser } from "../../wire/present-fields.js";
import type { ChatCompletionRequest, ChatMessage, WireToolCall } from "../../wire/request.js";
import {
  type CreateResponseBody,
  createResponseSchema,
  functionToolsOf,
  type InputContentPart,
  type InputItem,
  inputItemSchema,
} from "../../wire/responses-request.js";
import { compactionMessage, compactionSummary } from "./compaction.js";
import { runIdOfResponseId } from "./response-id.js";
import { responsesParameters } from "./responses-parameters.js";

const parseBody = presentFieldsParser(createResponseSchema);

/** A resume named by `previous_response_id`: the run, and the answers to its pending calls. */
export interface PreviousResponseResume {
  runId: string;
  answers: ResumeAnswer[];
}

/** A Responses request, validated: its body, its input items, and what it continues. */
export interface ParsedResponsesRequest {
  body: CreateResponseBody;
  /** The request's own input items (a string input is one user message). */
  items: InputItem[];
  /** A resume of a paused run named by `previous_response_id`; its request is ready to run. */
  resume?: PreviousResponseResume;
  /** The stored response this one continues (not a paused run's resume). */
  previousResponseId?: string;
  /** The conversation this response belongs to. */
  conversationId?: string;
  /** The input ended with a `compaction_trigger`: the answer is the conversation compacted, no run. */
  compact?: true;
}

function invalidValue(error: z.ZodError, prefix: (string | number)[] = []): InvalidRequestError {
  const issue = firstIssue(error);
  const param = issue === undefined ? null : issuePath(issue.path, prefix) || null;
  return new InvalidRequestError(`Invalid request: ${describeFirstIssue(error, prefix)}`, { param });
}

function partText(part: InputContentPart): string {
  if (part.type === "input_text" || part.type === "output_text") return part.text;
  if (part.type === "refusal") return part.refusal;
  return "";
}

function textOf(content: string | InputContentPart[], at: string, allowed: readonly InputContentPart["type"][]): string {
  if (typeof content === "string") return content;
  content.forEach((part, index) => {
    if (!allowed.includes(part.type)) {
      throw new InvalidRequestError(`${at}.content.${index}: a '${part.type}' part cannot stand here.`, {
        param: `${at}.content.${index}.type`,
      });
    }
  });
  return content.map(partText).join("");
}

function userContent(content: string | InputContentPart[], at: string): Extract<ChatMessage, { role: "user" }>["content"] {
  if (typeof content === "string") return content;
  return content.map((part, index) => {
    switch (part.type) {
      case "input_text":
      case "output_text":
        return { type: "text" as const, text: part.text };
      case "input_image":
        if (!part.image_url) {
          throw new InvalidRequestError(`${at}.content.${index}: give the image as image_url; this server stores no files.`, {
            param: `${at}.content.${index}.image_url`,
          });
        }
        return { type: "image_url" as const, image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
      case "input_file":
        return {
          type: "file" as const,
          file: {
            ...(part.file_data ? { file_data: part.file_data } : {}),
            ...(part.file_id ? { file_id: part.file_id } : {}),
            ...(part.filename ? { filename: part.filename } : {}),
          },
        };
      default:
        throw new InvalidRequestError(`${at}.content.${index}: a '${part.type}' part cannot stand in a user message.`, {
          param: `${at}.content.${index}.type`,
        });
    }
  });
}

/**
 * Input items as chat messages, exactly as chat-completions history becomes graph input:
 * consecutive `function_call` items are one assistant turn (attached to the assistant message
 * right before them), each `function_call_output` a tool message. Every replayed call needs
 * exactly one output, and every output a call (on a stateful thread, the call may be in the
 * thread). `earlier` items come before the input (a stored conversation) and are named so.
 */
export function itemsToMessages(items: InputItem[], options: { earlier?: number; threadHasCalls?: boolean } = {}): ChatMessage[] {
  const earlier = options.earlier ?? 0;
  const messages: ChatMessage[] = [];
  const calls = new Map<string, number>();
  const outputs = new Set<string>();
  const compactions = new Set<ChatMessage>();
  const label = (index: number) => (index < earlier ? `the stored item ${index} before input` : `input.${index - earlier}`);
  items.forEach((item, index) => {
    const at = label(index);
    if (item.type === "item_reference") {
      throw new UnsupportedParameterError(
        `${at}: item references are not supported; send the items themselves, or continue with previous_response_id (with the AI SDK, set providerOptions.openai.store to false).`,
        { param: at },
      );
    }
    // A model's reasoning, sent back, is not the graph's input (nor is a trigger, answered without a run).
    if (item.type === "reasoning" || item.type === "compaction_trigger") return;
    if (item.type === "compaction") {
      // It stands for what the assistant said and did before it: a client that put it after the
      // whole conversation (Codex, on the WebSocket mode) has those turns read once, in it.
      const kept = messages.filter(
        (message) => message.role === "user" || (message.role !== "assistant" && message.role !== "tool" && !compactions.has(message)),
      );
      messages.length = 0;
      messages.push(...kept);
      const summary: ChatMessage = { role: "system", content: compactionMessage(compactionSummary(item, at)) };
      compactions.add(summary);
      messages.push(summary);
      return;
    }
    if (item.type === "function_call") {
      if (calls.has(item.call_id)) {
        throw new InvalidRequestError(`${at}: the function call '${item.call_id}' appears twice.`, { param: `${at}.call_id` });
      }
      calls.set(item.call_id, index);
      const call: WireToolCall = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
      return;
    }
    if (item.type === "function_call_output") {
      if (!calls.has(item.call_id) && options.threadHasCalls !== true) {
        throw new InvalidRequestError(`${at}: no earlier function_call has the call_id '${item.call_id}'.`, { param: `${at}.call_id` });
      }
      if (outputs.has(item.call_id)) {
        throw new InvalidRequestError(`${at}: the function call '${item.call_id}' has more than one output.`, { param: `${at}.call_id` });
      }
      outputs.add(item.call_id);
      const content = typeof item.output === "string" ? item.output : item.output.map(partText).join("");
      messages.push({ role: "tool", tool_call_id: item.call_id, content });
      return;
    }
    if (item.role === "assistant") {
      messages.push({ role: "assistant", content: textOf(item.content, at, ["output_text", "refusal", "input_text"]) });
    } else if (item.role === "user") {
      messages.push({ role: "user", content: userContent(item.content, at) });
    } else {
      messages.push({ role: item.role, content: textOf(item.content, at, ["input_text"]) });
    }
  });
  for (const [callId, index] of calls) {
    if (!outputs.has(callId)) {
      throw new InvalidRequestError(
        `${label(index)}: the function call '${callId}' has no function_call_output; send one output for every call.`,
        {
          param: index < earlier ? "input" : label(index),
        },
      );
    }
  }
  return messages;
}

export function parseItems(input: unknown[], at = "input"): InputItem[] {
  return input.map((raw, index) => {
    const result = inputItemSchema.safeParse(raw);
    if (!result.success) throw invalidValue(result.error, [at, index]);
    return result.data;
  });
}

/** The answers of a `previous_response_id` resume: its input is function_call_output items only. */
function previousResponseResume(runId: string, items: InputItem[]): PreviousResponseResume {
  const answers = items.map((item, index) => {
    if (item.type !== "function_call_output") {
      throw new InvalidRequestError(
        `input.${index}: with previous_response_id, send only the function_call_output items that answer its calls.`,
        { param: `input.${index}` },
      );
    }
    const content = typeof item.output === "string" ? item.output : item.output.map(partText).join("");
    return { toolCallId: item.call_id, value: answerValue(content) };
  });
  if (answers.length === 0) {
    throw new InvalidRequestError("With previous_response_id, send a function_call_output for every call of that response.", {
      param: "input",
    });
  }
  return { runId, answers };
}

const ID = /^[A-Za-z0-9_-]{1,128}$/u;

/** A stored object's id from the request: well formed and of the kind expected, or a 400 naming the param. */
export function storedId(value: string, kind: "resp" | "conv", param: string): string {
  const what = kind === "resp" ? "a response id (resp_…)" : "a conversation id (conv_…)";
  if (!ID.test(value) || !value.startsWith(`${kind}_`)) {
    throw new InvalidRequestError(`${param} must be ${what}; got ${JSON.stringify(value.slice(0, 80))}.`, { param });
  }
  return value;
}

/** The conversation a request names, as a string or as `{ id }`. */
function conversationIdOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return storedId(value, "conv", "conversation");
  if (typeof value === "object" && !Array.isArray(value) && typeof (value as { id?: unknown }).id === "string") {
    const extra = Object.keys(value).find((key) => key !== "id");
    if (extra !== undefined) throw new UnknownParameterError(`conversation.${extra}`);
    return storedId((value as { id: string }).id, "conv", "conversation");
  }
  throw new InvalidRequestError("conversation must be a conversation id, or an object with its id.", { param: "conversation" });
}

const ITEM_TYPES = ["message", "function_call", "function_call_output", "reasoning", "compaction", "compaction_trigger", "item_reference"];

/**
 * What would change the answer, refused in words a newcomer reads: a tool choice that names a
 * hosted tool (a graph runs its own tools, so it cannot be made to call one), an input item of
 * a type this server does not read.
 */
function refuseUnservable(raw: Record<string, unknown>): void {
  const choice = raw.tool_choice as { type?: unknown } | null | undefined;
  if (
    typeof choice === "object" &&
    choice !== null &&
    typeof choice.type === "string" &&
    !["function", "allowed_tools"].includes(choice.type)
  ) {
    throw new InvalidRequestError(
      `tool_choice names the hosted tool '${choice.type.slice(0, 64)}', which a graph cannot be made to call: it runs its own tools. Leave tool_choice out, or name a function tool.`,
      { param: "tool_choice", code: "invalid_value" },
    );
  }
  if (!Array.isArray(raw.input)) return;
  raw.input.forEach((item: unknown, index) => {
    const type = (item as { type?: unknown } | null)?.type;
    if (typeof type === "string" && !ITEM_TYPES.includes(type)) {
      throw new InvalidRequestError(
        `input.${index}: this server does not read items of type '${type.slice(0, 64)}'; it reads ${ITEM_TYPES.join(", ")}.`,
        { param: `input.${index}.type`, code: "invalid_value" },
      );
    }
  });
}

/**
 * Validates a Responses body. Fields that ask for what this server cannot do are refused with
 * a sentence saying so; the fields clients send by default (`store`, `include: []`,
 * `tools: []`, `text: {}`) pass.
 */
export function parseResponsesRequest(raw: unknown): ParsedResponsesRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new InvalidRequestError("The request body must be a JSON object.");
  }
  refuseUnservable(raw as Record<string, unknown>);
  const result = parseBody(raw as Record<string, unknown>);
  if (!result.success) {
    if ("unknownField" in result) throw new UnknownParameterError(result.unknownField);
    throw invalidValue(result.error, [result.field]);
  }
  const body = result.data;
  // Codex asks for reasoning's encrypted content with store: false; chat-serve continues a
  // conversation without it, so the request is served and its reasoning items carry none.
  const unservable = body.include?.find((value) => value !== "reasoning.encrypted_content");
  if (unservable !== undefined) {
    throw new UnsupportedParameterError(`include is not supported: this server has no ${unservable} to add.`, { param: "include" });
  }
  const conversationId = conversationIdOf(body.conversation);
  const previous = body.previous_response_id ?? undefined;
  if (previous !== undefined && conversationId !== undefined) {
    throw new InvalidRequestError("Give previous_response_id or conversation, not both: a conversation already continues itself.", {
      param: "conversation",
    });
  }
  const all = typeof body.input === "string" ? [{ role: "user" as const, content: body.input }] : parseItems(body.input);
  const trigger = all.findIndex((item) => item.type === "compaction_trigger");
  if (trigger !== -1 && trigger !== all.length - 1) {
    throw new InvalidRequestError(`input.${trigger}: a compaction_trigger item must be the final input item.`, {
      param: `input.${trigger}`,
    });
  }
  const compact = trigger === -1 ? {} : { compact: true as const };
  const items = trigger === -1 ? all : all.slice(0, -1);
  if (previous !== undefined) {
    const runId = runIdOfResponseId(previous);
    // A response of an interrupt run answered with function_call_output items: a resume. An
    // interrupt run that did not pause is continued like any stored response.
    const answers = items.length > 0 && items.every((item) => item.type === "function_call_output");
    if (runId !== undefined && answers && trigger === -1) return { body, items, resume: previousResponseResume(runId, items) };
    return { body, items, previousResponseId: storedId(previous, "resp", "previous_response_id"), ...compact };
  }
  if (all.length === 0 && conversationId === undefined)
    throw new InvalidRequestError("input must hold at least one item.", { param: "input" });
  return conversationId === undefined ? { body, items, ...compact } : { body, items, conversationId, ...compact };
}

/** The names of the tools a request offers: functions and namespaces by name, hosted tools by type. */
function offeredTools(body: CreateResponseBody): string[] {
  return (body.tools ?? []).map((tool) => {
    const { name, type } = tool as { name?: unknown; type: string };
    return typeof name === "string" ? name : type;
  });
}

/**
 * The request the run engine takes: the chat-completions form of a Responses body, with the
 * messages given (the earlier items of a stateless conversation, then the new input), after
 * the instructions as a system message.
 */
export function engineRequest(
  body: CreateResponseBody,
  messages: ChatMessage[],
  options: { instructionsOnThread?: string } = {},
): ChatCompletionRequest {
  // Instructions a continued thread already holds are not added to it again (clients such as
  // the Agents SDK send the same instructions with every turn).
  if (body.instructions && body.instructions !== options.instructionsOnThread) {
    messages = [{ role: "system", content: body.instructions }, ...messages];
  }
  // Hosted and namespaced tools are the client's to offer, not the graph's to run.
  const functionTools = functionToolsOf(body);
  return {
    model: body.model,
    messages,
    metadata: body.metadata ?? {},
    stream: body.stream ?? false,
    ...(functionTools.length > 0
      ? {
          tools: functionTools.map((tool) => ({
            type: "function" as const,
            function: {
              name: tool.name,
              ...(tool.description ? { description: tool.description } : {}),
              ...(tool.parameters ? { parameters: tool.parameters } : {}),
              ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
            },
          })),
        }
      : {}),
    ...(typeof body.tool_choice === "string" ? { tool_choice: body.tool_choice } : {}),
    ...(body.tool_choice && typeof body.tool_choice === "object" && body.tool_choice.type === "function"
      ? { tool_choice: { type: "function" as const, function: { name: body.tool_choice.name } } }
      : {}),
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(body.user ? { user: body.user } : {}),
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.max_output_tokens != null ? { max_completion_tokens: body.max_output_tokens } : {}),
    parameters: responsesParameters(body),
    ...(asksInText(offeredTools(body)) ? { interruptsAsText: true } : {}),
  };
}
