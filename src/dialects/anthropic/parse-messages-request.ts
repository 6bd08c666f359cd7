import type { z } from "zod";
import { InvalidRequestError } from "../../errors/catalogue.js";
import { checkParameters } from "../../parameters/validate-parameters.js";
import { asksInText } from "../../runs/interrupts/spoken-interrupts.js";
import { bodyIssue } from "../../util/describe-issue.js";
import { present } from "../../util/present.js";
import type { ClientTool, ReasoningEffort, RequestParameters } from "../../wire/parameters.js";
import type { ChatCompletionRequest, ChatMessage } from "../../wire/request.js";
import {
  type AssistantBlock,
  type CountTokensRequest,
  countTokensRequest,
  isCustomTool,
  type MessageParam,
  type MessagesRequest,
  messagesRequest,
  type UserBlock,
} from "./messages-schema.js";

// An Anthropic Messages request, read into the one engine request every surface makes (a chat
// request): the system prompt first, each user turn's tool results as tool messages, then the
// rest of the turn as a user message; each assistant turn's text and tool calls. Anthropic's
// rules on the conversation's shape are checked here, with Anthropic's own wording where it
// has one.

type ChatPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: Record<string, string> };

function invalid(message: string, param: string | null = null): InvalidRequestError {
  return new InvalidRequestError(message, { param });
}

/** Parses `body` with `schema`, a failure as Anthropic's invalid_request_error naming the field. */
function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("The request body must be a JSON object.");
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const { message, param } = bodyIssue(parsed.error as unknown as z.ZodError);
    throw invalid(message, param);
  }
  return parsed.data;
}

type Turn = { role: "user" | "assistant" | "system"; index: number; blocks: { block: unknown; at: string }[] };

/** Consecutive turns of one role are one turn, as Anthropic combines them. */
function turns(messages: readonly MessageParam[]): Turn[] {
  const merged: Turn[] = [];
  messages.forEach((message, index) => {
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    const blocks = content.map((block, at) => ({
      block,
      at: typeof message.content === "string" ? `messages.${index}.content` : `messages.${index}.content.${at}`,
    }));
    const last = merged.at(-1);
    if (last?.role === message.role) last.blocks.push(...blocks);
    else merged.push({ role: message.role, index, blocks });
  });
  return merged;
}

/** A text-only block list's text (a document's content, a tool result's, a search result's). */
function textOf(content: string | readonly { type: string; text?: unknown }[] | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join("\n");
}

/** A user block other than a tool result, as chat content parts. */
function userParts(block: Exclude<UserBlock, { type: "tool_result" }>, at: string): ChatPart[] {
  switch (block.type) {
    case "text":
      return [{ type: "text", text: block.text }];
    case "image":
      return [
        {
          type: "image_url",
          image_url: {
            url: block.source.type === "url" ? block.source.url : `data:${block.source.media_type};base64,${block.source.data}`,
          },
        },
      ];
    case "search_result":
      return [{ type: "text", text: `${block.title} (${block.source})\n${textOf(block.content)}` }];
    case "document": {
      const { source } = block;
      const title = block.title == null ? "" : `${block.title}\n`;
      if (source.type === "text") return [{ type: "text", text: `${title}${source.data}` }];
      if (source.type === "content") return [{ type: "text", text: `${title}${textOf(source.content)}` }];
      if (source.type === "url") {
        throw invalid(`${at}.source: a document by URL is not fetched; send it as base64 or as text.`, `${at}.source`);
      }
      return [
        {
          type: "file",
          file: { file_data: `data:${source.media_type};base64,${source.data}`, ...(block.title == null ? {} : { filename: block.title }) },
        },
      ];
    }
  }
}

/** A user turn: its tool results as tool messages, then the rest as one user message. */
function userMessages(blocks: readonly { block: unknown; at: string }[], pending: Set<string>): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: ChatPart[] = [];
  for (const { block, at } of blocks as readonly { block: UserBlock; at: string }[]) {
    if (block.type !== "tool_result") {
      parts.push(...userParts(block, at));
      continue;
    }
    if (!pending.delete(block.tool_use_id)) {
      throw invalid(
        `${at}: unexpected tool_use_id found in tool_result blocks: ${block.tool_use_id}. Each tool_result block must have a corresponding tool_use block in the previous message.`,
        `${at}.tool_use_id`,
      );
    }
    const text = textOf(block.content as string | { type: string; text?: unknown }[] | undefined);
    tools.push({
      role: "tool",
      tool_call_id: block.tool_use_id,
      content: block.is_error === true ? JSON.stringify({ error: text }) : text,
    });
  }
  if (pending.size > 0) {
    throw invalid(
      `${blocks[0]?.at.replace(/\.content(\.\d+)?$/u, "") ?? "messages"}: tool_use ids were found without tool_result blocks immediately after: ${[...pending].join(", ")}. Each tool_use block must have a corresponding tool_result block in the next message.`,
      "messages",
    );
  }
  if (parts.length === 0) return tools;
  const content = parts.every((part) => part.type === "text") ? parts.map((part) => (part as { text: string }).text).join("\n") : parts;
  return [...tools, { role: "user", content } as ChatMessage];
}

/** An assistant turn: its text and its tool calls; thinking and Anthropic's server tools are left out. */
function assistantMessage(blocks: readonly { block: unknown; at: string }[], pending: Set<string>): ChatMessage {
  const text: string[] = [];
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  for (const { block } of blocks as readonly { block: AssistantBlock }[]) {
    if (block.type === "text") text.push(block.text);
    else if (block.type === "tool_use") {
      pending.add(block.id);
      calls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input) } });
    }
  }
  return {
    role: "assistant",
    content: calls.length > 0 && text.length === 0 ? null : text.join(""),
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  };
}

/** A system turn's text. */
function systemText(turn: Turn): string {
  return textOf(turn.blocks.map(({ block }) => block as { type: string; text?: unknown }));
}

/**
 * The conversation as chat messages, its shape checked as Anthropic checks it. System turns
 * inside `messages` (Claude Code sends one on every request) stay system messages where they
 * stand, as Anthropic reads a mid-conversation system message; those before the first user
 * turn join the top-level system prompt, after it.
 */
function chatMessages(request: CountTokensRequest): ChatMessage[] {
  const all = turns(request.messages);
  const firstSpoken = all.findIndex((turn) => turn.role !== "system");
  const leading = firstSpoken === -1 ? all : all.slice(0, firstSpoken);
  const conversation = firstSpoken === -1 ? [] : all.slice(firstSpoken);
  const spoken = conversation.filter((turn) => turn.role !== "system");
  const first = spoken[0];
  if (first?.role !== "user") {
    throw invalid(`messages.${first?.index ?? 0}.role: the first message must use the user role.`, `messages.${first?.index ?? 0}.role`);
  }
  const last = spoken.at(-1);
  if (last?.role !== "user") {
    throw invalid(
      "messages: the last message must use the user role: a graph cannot continue a prefilled assistant message.",
      `messages.${last?.index ?? request.messages.length - 1}.role`,
    );
  }
  const top = request.system === undefined ? "" : typeof request.system === "string" ? request.system : textOf(request.system);
  const system = [top, ...leading.map(systemText)].filter((text) => text !== "").join("\n\n");
  const messages: ChatMessage[] = system === "" ? [] : [{ role: "system", content: system }];
  let pending = new Set<string>();
  for (const turn of conversation) {
    if (turn.role === "system") {
      const text = systemText(turn);
      if (text !== "") messages.push({ role: "system", content: text });
    } else if (turn.role === "assistant") {
      pending = new Set();
      messages.push(assistantMessage(turn.blocks, pending));
    } else {
      messages.push(...userMessages(turn.blocks, pending));
      pending = new Set();
    }
  }
  return messages;
}

/** A thinking budget as a reasoning effort: about 1k tokens is low, 8k medium, more high. */
function effortOf(request: CountTokensRequest): ReasoningEffort | undefined {
  const effort = request.output_config?.effort;
  if (effort !== undefined) return effort;
  const { thinking } = request;
  if (thinking === undefined || thinking.type === "adaptive") return undefined;
  if (thinking.type === "disabled") return "none";
  const budget = thinking.budget_tokens as number;
  return budget < 4_096 ? "low" : budget < 16_384 ? "medium" : "high";
}

/** The parameters a graph reads (`requestParameters`), from Anthropic's spelling of them. */
function parameters(request: CountTokensRequest & Partial<MessagesRequest>): RequestParameters {
  const tools: ClientTool[] = (request.tools ?? [])
    .filter(isCustomTool)
    .map((tool) =>
      present<ClientTool>({ name: tool.name, description: tool.description, parameters: tool.input_schema as Record<string, unknown> }),
    );
  const choice = request.tool_choice;
  const serverTool = (request.tools ?? []).find((tool) => !isCustomTool(tool) && choice?.type === "tool" && tool.name === choice.name);
  if (serverTool !== undefined) {
    throw invalid(
      `tool_choice.name: '${serverTool.name}' is a server tool (${String(serverTool.type)}), which a graph cannot be made to call: it runs its own tools. Leave tool_choice out, or name one of your tools.`,
      "tool_choice.name",
    );
  }
  const effort = effortOf(request);
  const result = present<RequestParameters>({
    temperature: request.temperature,
    topP: request.top_p,
    maxTokens: request.max_tokens,
    stop: request.stop_sequences,
    reasoning: effort === undefined ? undefined : { effort },
    tools: tools.length === 0 ? undefined : tools,
    toolChoice:
      choice === undefined
        ? undefined
        : choice.type === "auto"
          ? "auto"
          : choice.type === "any"
            ? "required"
            : choice.type === "none"
              ? "none"
              : { type: "function", name: choice.name },
    parallelToolCalls:
      choice !== undefined && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true ? false : undefined,
  });
  checkParameters(result, { toolName: (index) => `tools.${index}.name`, toolChoice: "tool_choice.name", schema: "tools" });
  return result;
}

/** What a Messages request asks, as the engine's request (and whether it streams). */
export function parseMessagesRequest(body: unknown): ChatCompletionRequest {
  const request = parseBody(messagesRequest, body);
  const messages = chatMessages(request);
  const { user_id: userId, ...metadata } = request.metadata ?? {};
  return {
    model: request.model,
    messages,
    stream: request.stream === true,
    metadata,
    ...(userId === undefined ? {} : { user: userId }),
    parameters: parameters(request),
    ...(asksInText((request.tools ?? []).map((tool) => tool.name)) ? { interruptsAsText: true } : {}),
  };
}

/** A `count_tokens` body as the engine's request it would make, for counting. */
export function parseCountTokensRequest(body: unknown): ChatCompletionRequest {
  const request = parseBody(countTokensRequest, body);
  const params = parameters(request);
  return {
    model: request.model,
    messages: chatMessages(request),
    metadata: {},
    parameters: params,
    ...(params.tools === undefined ? {} : { tools: params.tools.map((tool) => ({ type: "function" as const, function: tool })) }),
  };
}

/** Whether the request asked for no thinking blocks (`thinking: {type: "disabled"}`). */
export function thinkingDisabled(body: unknown): boolean {
  const thinking = (body as { thinking?: { type?: unknown } } | undefined)?.thinking;
  return thinking?.type === "disabled";
}
