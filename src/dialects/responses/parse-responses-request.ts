import type { z } from "zod";
import { InvalidRequestError, UnknownParameterError, UnsupportedParameterError } from "../../errors/catalogue.js";
import { answerValue, type ResumeAnswer } from "../../runs/interrupts/resume-request.js";
import { describeFirstIssue, firstIssue, issuePath } from "../../util/describe-issue.js";
import type { ChatCompletionRequest, ChatMessage, WireToolCall } from "../../wire/request.js";
import {
  type CreateResponseBody,
  createResponseSchema,
  type InputContentPart,
  type InputItem,
  inputItemSchema,
} from "../../wire/responses-request.js";
import { runIdOfResponseId } from "./response-id.js";
import { responsesParameters } from "./responses-parameters.js";

/** A resume named by `previous_response_id`: the run, and the answers to its pending calls. */
export interface PreviousResponseResume {
  runId: string;
  answers: ResumeAnswer[];
}

/** A Responses request as the run engine takes it: the chat-completions form, plus its own fields. */
export interface ParsedResponsesRequest {
  body: CreateResponseBody;
  request: ChatCompletionRequest;
  resume?: PreviousResponseResume;
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
 * exactly one output, and every output a call.
 */
function itemsToMessages(items: InputItem[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const calls = new Map<string, number>();
  const outputs = new Set<string>();
  items.forEach((item, index) => {
    const at = `input.${index}`;
    if (item.type === "item_reference") {
      throw new UnsupportedParameterError(
        `${at}: item references need stored responses, and this server stores none; send the items themselves (with the AI SDK, set providerOptions.openai.store to false).`,
        { param: at },
      );
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
      if (!calls.has(item.call_id)) {
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
        `input.${index}: the function call '${callId}' has no function_call_output; send one output for every call.`,
        {
          param: `input.${index}`,
        },
      );
    }
  }
  return messages;
}

function parseItems(input: unknown[]): InputItem[] {
  return input.map((raw, index) => {
    const result = inputItemSchema.safeParse(raw);
    if (!result.success) throw invalidValue(result.error, ["input", index]);
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

/**
 * Validates a Responses body and turns it into the request the run engine takes. Stateless:
 * fields that ask for stored state or background work are refused with a sentence saying so;
 * the fields clients send by default (`store`, `include: []`, `tools: []`, `text: {}`) pass.
 */
export function parseResponsesRequest(raw: unknown): ParsedResponsesRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new InvalidRequestError("The request body must be a JSON object.");
  }
  const result = createResponseSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    if (issue?.code === "unrecognized_keys" && issue.path.length === 0) throw new UnknownParameterError(String(issue.keys[0]));
    throw invalidValue(result.error);
  }
  const body = result.data;
  if (body.background === true) {
    throw new UnsupportedParameterError("background responses are not supported: this server answers each request as it runs.", {
      param: "background",
    });
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw new UnsupportedParameterError("conversation is not supported: this server stores nothing; send the history as input items.", {
      param: "conversation",
    });
  }
  if (body.include !== undefined && body.include !== null && body.include.length > 0) {
    throw new UnsupportedParameterError(`include is not supported: this server has no ${body.include[0]} to add.`, { param: "include" });
  }
  const items = typeof body.input === "string" ? [{ role: "user" as const, content: body.input }] : parseItems(body.input);
  let resume: PreviousResponseResume | undefined;
  let messages: ChatMessage[];
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    const runId = runIdOfResponseId(body.previous_response_id);
    if (runId === undefined) {
      throw new InvalidRequestError(
        "previous_response_id must name a paused run's response: this server stores no responses, so send the earlier items as input instead.",
        { param: "previous_response_id" },
      );
    }
    resume = previousResponseResume(runId, items);
    messages = [];
  } else {
    messages = itemsToMessages(items);
    if (messages.length === 0) throw new InvalidRequestError("input must hold at least one item.", { param: "input" });
  }
  if (body.instructions) messages.unshift({ role: "system", content: body.instructions });
  const request: ChatCompletionRequest = {
    model: body.model,
    messages,
    metadata: body.metadata ?? {},
    stream: body.stream ?? false,
    ...(body.tools && body.tools.length > 0
      ? {
          tools: body.tools.map((tool) => ({
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
  };
  return resume === undefined ? { body, request } : { body, request, resume };
}
