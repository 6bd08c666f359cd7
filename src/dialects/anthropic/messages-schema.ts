import { z } from "zod";
import { reasoningEffortSchema } from "../../wire/parameters.js";

// The Anthropic Messages API request (`POST /v1/messages`), as far as a graph can use it. Blocks
// keep fields the server has no use for (`cache_control`, `citations`): Claude Code marks its
// system prompt and tools for caching, which is accepted and ignored. Top-level fields the API
// adds for its own models (`service_tier`, `container`, `context_management`, betas) are
// accepted and ignored too, as a gateway does: Claude Code sends new ones as they ship.

const base64Source = z.object({
  type: z.literal("base64"),
  media_type: z.string({ error: "the base64 source needs its media_type" }).min(1),
  data: z.string({ error: "the base64 source needs its data" }),
});
const urlSource = z.object({ type: z.literal("url"), url: z.string().min(1) });
const plainTextSource = z.object({ type: z.literal("text"), media_type: z.string().optional(), data: z.string() });

export const textBlock = z.looseObject({ type: z.literal("text"), text: z.string({ error: "a text block needs its text" }) });
const imageBlock = z.looseObject({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [base64Source, urlSource], { error: "an image source is base64 or url" }),
});
const documentBlock = z.looseObject({
  type: z.literal("document"),
  source: z.discriminatedUnion(
    "type",
    [
      base64Source,
      urlSource,
      plainTextSource,
      z.object({ type: z.literal("content"), content: z.union([z.string(), z.array(textBlock)]) }),
    ],
    { error: "a document source is base64, text, content or url" },
  ),
  title: z.string().nullish(),
});
const searchResultBlock = z.looseObject({
  type: z.literal("search_result"),
  source: z.string(),
  title: z.string(),
  content: z.array(textBlock),
});
const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string({ error: "a tool_result needs its tool_use_id" }).min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});
const toolUseBlock = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string({ error: "a tool_use needs its id" }).min(1),
  name: z.string({ error: "a tool_use needs its name" }).min(1),
  input: z.record(z.string(), z.unknown(), { error: "a tool_use's input is an object" }),
});
/** What an assistant turn may hold that only Anthropic's own models make: kept out of the graph's input. */
const ASSISTANT_ONLY =
  /^(thinking|redacted_thinking|server_tool_use|web_search_tool_result|web_fetch_tool_result|code_execution_tool_result|bash_code_execution_tool_result|text_editor_code_execution_tool_result|mcp_tool_use|mcp_tool_result|container_upload)$/u;

export const userBlock = z.discriminatedUnion("type", [textBlock, imageBlock, documentBlock, searchResultBlock, toolResultBlock]);
export type UserBlock = z.infer<typeof userBlock>;
export type ToolUseBlock = z.infer<typeof toolUseBlock>;
export type AssistantBlock = z.infer<typeof textBlock> | ToolUseBlock | { type: "ignored" };

/** Each block checked by the schema its `type` names, so that a mistake names the block's own field. */
function blocks<T>(pick: (type: string) => z.ZodType<T> | "ignored" | undefined, allowed: string) {
  return z.array(
    z.looseObject({ type: z.string({ error: "a content block needs its type" }) }).transform((value, context): T | { type: "ignored" } => {
      const schema = pick(value.type);
      if (schema === "ignored") return { type: "ignored" };
      if (schema === undefined) {
        context.addIssue({ code: "custom", path: ["type"], message: `a ${value.type} block is not taken here (${allowed})` });
        return z.NEVER;
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) context.addIssue({ code: "custom", path: issue.path, message: issue.message });
        return z.NEVER;
      }
      return parsed.data;
    }),
  );
}

const USER_BLOCKS: Record<string, z.ZodType<UserBlock>> = {
  text: textBlock,
  image: imageBlock,
  document: documentBlock,
  search_result: searchResultBlock,
  tool_result: toolResultBlock,
};
const userBlocks = blocks<UserBlock>((type) => USER_BLOCKS[type], "text, image, document, search_result, tool_result");
const assistantBlocks = blocks<z.infer<typeof textBlock> | ToolUseBlock>(
  (type) => (type === "text" ? textBlock : type === "tool_use" ? toolUseBlock : ASSISTANT_ONLY.test(type) ? "ignored" : undefined),
  "text, tool_use, thinking",
);

const message = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("user"), content: z.union([z.string(), userBlocks], { error: "content is a string or a list of blocks" }) }),
    z.object({
      role: z.literal("assistant"),
      content: z.union([z.string(), assistantBlocks], { error: "content is a string or a list of blocks" }),
    }),
    // A system message inside the conversation (Anthropic's mid-conversation system messages;
    // Claude Code sends one on every request): text blocks, their other fields ignored.
    z.object({
      role: z.literal("system"),
      content: z.union([z.string(), z.array(textBlock)], { error: "a system message's content is a string or a list of text blocks" }),
    }),
  ],
  {
    error: (issue) =>
      `role must be 'user', 'assistant' or 'system' (got ${JSON.stringify((issue.input as { role?: unknown } | undefined)?.role)})`,
  },
);
export type MessageParam = z.infer<typeof message>;

const customTool = z.looseObject({
  type: z.literal("custom").optional(),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/u, "must be 1-128 letters, digits, underscores or dashes"),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal("object", { error: "input_schema's type must be 'object'" }) }),
});
/** Anthropic's own tools (`web_search_20250305`, `bash_20250124`…) run on Anthropic's servers: a graph has its own. */
const serverTool = z.looseObject({ type: z.string().regex(/^(?!custom$).+_\d{8}$/u), name: z.string() });

const toolChoice = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
    z.object({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
    z.object({ type: z.literal("tool"), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
    z.object({ type: z.literal("none") }),
  ],
  { error: "tool_choice's type is auto, any, tool or none" },
);

const thinking = z.discriminatedUnion(
  "type",
  [
    z.looseObject({ type: z.literal("enabled"), budget_tokens: z.int().min(1024, "is at least 1024") }),
    z.looseObject({ type: z.literal("adaptive") }),
    z.looseObject({ type: z.literal("disabled") }),
  ],
  { error: "thinking's type is enabled, adaptive or disabled" },
);

const systemPrompt = z.union([z.string(), z.array(textBlock)], { error: "system is a string or a list of text blocks" });

/** What both `/messages` and `/messages/count_tokens` read. */
const common = {
  model: z.string({ error: "Field required" }).min(1, "is empty"),
  messages: z.array(message, { error: "Field required" }).min(1, "at least one message is required"),
  system: systemPrompt.optional(),
  tools: z.array(z.union([customTool, serverTool], { error: "a tool needs a name and an input_schema of type 'object'" })).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
  /** Anthropic's `output_config.effort`, the reasoning effort of the newer models. */
  output_config: z.looseObject({ effort: reasoningEffortSchema.optional() }).optional(),
};

/** chat-serve's own keys beside Anthropic's `user_id`, as on the other surfaces (docs/anthropic.md). */
const metadata = z.record(z.string(), z.string({ error: "metadata values are strings" }).max(8192)).optional();

export const messagesRequest = z.looseObject({
  ...common,
  max_tokens: z.int({ error: "Field required" }).min(1, "must be at least 1"),
  stream: z.boolean().optional(),
  metadata,
  stop_sequences: z.array(z.string().min(1, "a stop sequence is not empty")).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
});
export type MessagesRequest = z.infer<typeof messagesRequest>;

export const countTokensRequest = z.looseObject(common);
export type CountTokensRequest = z.infer<typeof countTokensRequest>;

export const isCustomTool = (tool: unknown): tool is z.infer<typeof customTool> => customTool.safeParse(tool).success;
