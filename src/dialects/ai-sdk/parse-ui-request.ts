import { z } from "zod";
import { InvalidRequestError } from "../../errors/catalogue.js";
import { bodyIssue } from "../../util/describe-issue.js";
import { parseChatRequest } from "../chat/parse-chat-request.js";

// The body the AI SDK's `useChat` sends through `DefaultChatTransport`: the chat's id, its UI
// messages (each a list of parts), why it is sent (`trigger`), and the transport's own `body`
// fields. Read here into the one engine request every surface makes (a chat request), the
// chat id naming the session.

/** The name a graph's pause takes as a tool part (`tool-graph_interrupt`), as on the chat surface. */
const INTERRUPT_TOOL = "graph_interrupt";

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const filePart = z.object({ type: z.literal("file"), mediaType: z.string(), url: z.string(), filename: z.string().optional() });
/** A tool part: `tool-NAME` (a typed tool) or `dynamic-tool` (with its `toolName`). */
const toolPart = z.object({
  type: z.string().regex(/^(tool-.+|dynamic-tool)$/u),
  toolName: z.string().optional(),
  toolCallId: z.string({ error: "a tool part needs its toolCallId" }).min(1, "a tool part needs its toolCallId"),
  state: z.enum([
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
  ]),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  errorText: z.string().optional(),
});
type ToolPart = z.infer<typeof toolPart>;
/** Parts the server has no use for in a request: the page's own record of the answer. */
const ignoredPart = z.object({ type: z.string().regex(/^(reasoning|step-start|source-url|source-document|data-.+)$/u) });

/** Each part checked by the schema its `type` names, so that a mistake names the part's own field. */
const part = z.looseObject({ type: z.string() }).transform((value, context) => {
  const schema =
    value.type === "text"
      ? textPart
      : value.type === "file"
        ? filePart
        : /^(tool-.+|dynamic-tool)$/u.test(value.type)
          ? toolPart
          : /^(reasoning|step-start|source-url|source-document|data-.+)$/u.test(value.type)
            ? ignoredPart
            : undefined;
  if (schema === undefined) {
    context.addIssue({
      code: "custom",
      path: ["type"],
      message: "is not a part useChat sends (text, file, reasoning, tool-*, dynamic-tool, data-*, source-*, step-start)",
    });
    return z.NEVER;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) context.addIssue({ code: "custom", path: issue.path, message: issue.message });
    return z.NEVER;
  }
  return parsed.data as z.infer<typeof textPart> | z.infer<typeof filePart> | ToolPart | z.infer<typeof ignoredPart>;
});

const uiMessage = z.object({
  id: z.string(),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(part),
  metadata: z.unknown().optional(),
});

const uiRequest = z.object({
  id: z.string({ error: "the chat id is missing" }).min(1, "the chat id is empty").max(256, "the chat id is longer than 256 characters"),
  messages: z.array(uiMessage, { error: "messages must be the chat's UI messages" }).min(1, "there are no messages"),
  trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
  messageId: z.string().optional(),
  /** The graph's client settings, from the transport's `body: { settings }`. */
  settings: z.record(z.string(), z.unknown(), { error: "settings must be an object of the graph's client settings" }).optional(),
  /** assistant-ui's `AssistantChatTransport`: the page's system prompt and its frontend tools (name → JSON schema). */
  system: z.string("system must be the system prompt's text").optional(),
  tools: z
    .record(
      z.string(),
      z.looseObject({ description: z.string().optional(), parameters: z.unknown().optional() }),
      "tools must be an object of tool name → { description, parameters }",
    )
    .optional(),
});

type UiMessage = z.infer<typeof uiMessage>;
type ChatMessage = Record<string, unknown>;

const isTool = (value: UiMessage["parts"][number]): value is ToolPart => "toolCallId" in value;
const toolNameOf = (tool: ToolPart) => (tool.type === "dynamic-tool" ? (tool.toolName ?? "") : tool.type.slice("tool-".length));

/** What a tool part answered, as the tool message's content: an interrupt's answer is its `resume`. */
function toolContent(tool: ToolPart): string {
  if (tool.state === "output-error" || tool.state === "output-denied") {
    return JSON.stringify({
      error: tool.errorText ?? (tool.state === "output-denied" ? "The user denied this tool call." : "The tool failed."),
    });
  }
  if (toolNameOf(tool) === INTERRUPT_TOOL) return JSON.stringify({ resume: tool.output ?? null });
  return typeof tool.output === "string" ? tool.output : JSON.stringify(tool.output ?? null);
}

/** A user or system message's content: its text, with images as image parts. */
function userContent(message: UiMessage, index: number): string | Record<string, unknown>[] {
  const parts = message.parts.flatMap(
    (entry, at): ({ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } })[] => {
      if (entry.type === "text") return [{ type: "text", text: (entry as z.infer<typeof textPart>).text }];
      if (entry.type === "file") {
        const file = entry as z.infer<typeof filePart>;
        if (!file.mediaType.startsWith("image/")) {
          throw new InvalidRequestError(`messages.${index}.parts.${at}: a ${file.mediaType} file is not read; attach images or text.`, {
            param: `messages.${index}.parts.${at}`,
          });
        }
        return [{ type: "image_url", image_url: { url: file.url } }];
      }
      return [];
    },
  );
  return parts.every((entry) => entry.type === "text") ? parts.map((entry) => entry.text).join("") : parts;
}

/** An assistant message: its text, its tool calls, then one tool message per call answered. */
function assistantMessages(message: UiMessage): ChatMessage[] {
  const text = message.parts.flatMap((entry) => (entry.type === "text" ? [(entry as z.infer<typeof textPart>).text] : [])).join("");
  const tools = message.parts.filter(isTool);
  const calls = tools.map((tool) => ({
    id: tool.toolCallId,
    type: "function",
    function: { name: toolNameOf(tool), arguments: JSON.stringify(tool.input ?? {}) },
  }));
  const answered = tools.filter(
    (tool) => tool.state === "output-available" || tool.state === "output-error" || tool.state === "output-denied",
  );
  return [
    { role: "assistant", content: text === "" && calls.length > 0 ? null : text, ...(calls.length === 0 ? {} : { tool_calls: calls }) },
    ...answered.map((tool) => ({ role: "tool", tool_call_id: tool.toolCallId, content: toolContent(tool) })),
  ];
}

/** The request `useChat` sent, as the engine's chat request for `model`; the chat id is the session. */
export function parseUiRequest(
  model: string,
  body: unknown,
): { chatId: string; request: ReturnType<typeof parseChatRequest>; continues?: string } {
  const parsed = uiRequest.safeParse(body);
  if (!parsed.success) {
    const { message, param } = bodyIssue(parsed.error as unknown as z.ZodError);
    throw new InvalidRequestError(message, { param });
  }
  const { id, messages, settings, system, tools } = parsed.data;
  const chat = messages.flatMap((message, index) =>
    message.role === "assistant" ? assistantMessages(message) : [{ role: message.role, content: userContent(message, index) }],
  );
  // The page's system prompt and frontend tools reach the graph as a chat completion's would.
  const offered = Object.entries(tools ?? {}).map(([name, tool]) => ({
    type: "function",
    function: {
      name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.parameters ?? { type: "object" },
    },
  }));
  const request = parseChatRequest({
    model,
    messages: system === undefined || system.trim() === "" ? chat : [{ role: "system", content: system }, ...chat],
    ...(offered.length === 0 ? {} : { tools: offered }),
    stream: true,
    stream_options: { include_usage: true },
    // Client events (status, progress, artifacts) go on the wire: useChat shows them as data parts.
    metadata: {
      session_id: id,
      graph_stream_events: "v1",
      ...(settings === undefined ? {} : { graph_runtime_settings: JSON.stringify(settings) }),
    },
  });
  // A conversation that ends with the assistant's message goes on with it (a tool's output, an approval).
  const last = messages.at(-1);
  return { chatId: id, request, ...(last?.role === "assistant" ? { continues: last.id } : {}) };
}
