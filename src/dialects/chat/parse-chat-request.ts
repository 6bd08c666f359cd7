import type { z } from "zod";
import { InvalidChatMessageError, InvalidRequestError, UnknownParameterError, UnsupportedParameterError } from "../../errors/catalogue.js";
import { describeFirstIssue, firstIssue, issuePath } from "../../util/describe-issue.js";
import { presentFieldsParser } from "../../wire/present-fields.js";
import {
  type ChatCompletionRequest,
  type ChatMessage,
  chatCompletionRequestSchema,
  LEGACY_FIELDS,
  messageSchemaByRole,
  requiredFieldsByRole,
} from "../../wire/request.js";
import { chatParameters } from "./chat-parameters.js";

const LEGACY_ENTRIES = Object.entries(LEGACY_FIELDS);
const parseBody = presentFieldsParser(chatCompletionRequestSchema);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalidValue(error: z.ZodError, prefix: (string | number)[] = []): InvalidRequestError {
  const issue = firstIssue(error);
  const param = issue === undefined ? null : issuePath(issue.path, prefix) || null;
  return new InvalidRequestError(`Invalid request: ${describeFirstIssue(error, prefix)}`, { param });
}

function parseMessage(raw: unknown, index: number): ChatMessage {
  const at = `messages.${index}`;
  if (!isObject(raw)) throw new InvalidChatMessageError(`${at} must be a message object.`, { param: at });
  const role = raw.role;
  if (role === undefined) throw new InvalidChatMessageError(`${at} is missing 'role'.`, { param: `${at}.role` });
  if (role === "function") {
    throw new UnsupportedParameterError(
      `${at}: the 'function' role is deprecated and not supported; answer tool calls with a 'tool' message.`,
      { param: `${at}.role` },
    );
  }
  if (typeof role !== "string" || !Object.hasOwn(messageSchemaByRole, role)) {
    throw new InvalidRequestError(`${at}.role must be one of system, developer, user, assistant, tool (got ${JSON.stringify(role)}).`, {
      param: `${at}.role`,
    });
  }
  if (role === "assistant" && raw.function_call !== undefined && raw.function_call !== null) {
    throw new UnsupportedParameterError(`${at}: 'function_call' is deprecated and not supported; use 'tool_calls'.`, {
      param: `${at}.function_call`,
    });
  }
  for (const field of requiredFieldsByRole[role] ?? []) {
    if (raw[field] === undefined || raw[field] === null) {
      throw new InvalidChatMessageError(`${at}: a '${role}' message requires '${field}'.`, { param: `${at}.${field}` });
    }
  }
  if (role === "assistant" && (raw.content === undefined || raw.content === null) && raw.tool_calls === undefined) {
    throw new InvalidChatMessageError(`${at}: an 'assistant' message requires 'content' or 'tool_calls'.`, {
      param: `${at}.content`,
    });
  }
  const result = messageSchemaByRole[role as keyof typeof messageSchemaByRole].safeParse(raw);
  if (!result.success) throw invalidValue(result.error, ["messages", index]);
  return result.data as ChatMessage;
}

/**
 * Validates a chat-completions body into the typed request the runs see. Every problem is
 * a 400 with a dotted `param`; deprecated function-calling fields are refused by name.
 */
export function parseChatRequest(body: unknown): ChatCompletionRequest {
  if (!isObject(body)) throw new InvalidRequestError("The request body must be a JSON object.");
  for (const [legacy, replacement] of LEGACY_ENTRIES) {
    if (Object.hasOwn(body, legacy)) {
      throw new UnsupportedParameterError(`'${legacy}' is deprecated and not supported; use '${replacement}' instead.`, {
        param: legacy,
      });
    }
  }
  const result = parseBody(body);
  if (!result.success) {
    if ("unknownField" in result) throw new UnknownParameterError(result.unknownField);
    throw invalidValue(result.error, [result.field]);
  }
  const parsed = result.data;
  const messages = parsed.messages.map(parseMessage);
  const parameters = chatParameters(parsed);
  // The parsed body is this call's own object: completed in place (same keys, same order) rather than copied.
  const request = parsed as unknown as ChatCompletionRequest;
  request.messages = messages;
  request.metadata = parsed.metadata ?? {};
  request.parameters = parameters;
  return request;
}
