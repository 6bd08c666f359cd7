import { z } from "zod";
import { type RequestParameters, reasoningEffortSchema, responseFormatSchema } from "./parameters.js";

// The chat-completions request body. Top-level objects are strict (unknown fields are a
// client error); message objects keep unknown fields out rather than failing, because real
// clients echo extra assistant fields such as `refusal` or `annotations` back to us.

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({ url: z.string(), detail: z.enum(["auto", "low", "high"]).optional() }),
});
const audioPart = z.object({
  type: z.literal("input_audio"),
  input_audio: z.object({ data: z.string(), format: z.string() }),
});
const filePart = z.object({
  type: z.literal("file"),
  file: z.object({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});
const refusalPart = z.object({ type: z.literal("refusal"), refusal: z.string() });

const userContentPart = z.discriminatedUnion("type", [textPart, imagePart, audioPart, filePart]);
const assistantContentPart = z.discriminatedUnion("type", [textPart, refusalPart]);

const textContent = z.union([z.string(), z.array(textPart)]);

export const toolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

const systemMessageSchema = z.object({
  role: z.enum(["system", "developer"]),
  content: textContent,
  name: z.string().optional(),
});
const userMessageSchema = z.object({
  role: z.literal("user"),
  content: z.union([z.string(), z.array(userContentPart)]),
  name: z.string().optional(),
});
const assistantMessageSchema = z.object({
  role: z.literal("assistant"),
  content: z.union([z.string(), z.array(assistantContentPart)]).nullish(),
  tool_calls: z.array(toolCallSchema).optional(),
  name: z.string().optional(),
  refusal: z.string().nullish(),
});
export const toolMessageSchema = z.object({
  role: z.literal("tool"),
  content: textContent,
  tool_call_id: z.string().min(1),
});

/** Fields each role requires, checked first so a missing one gets `invalid_chat_message`. */
export const requiredFieldsByRole: Record<string, readonly string[]> = {
  system: ["content"],
  developer: ["content"],
  user: ["content"],
  assistant: [],
  tool: ["content", "tool_call_id"],
};

export const messageSchemaByRole = {
  system: systemMessageSchema,
  developer: systemMessageSchema,
  user: userMessageSchema,
  assistant: assistantMessageSchema,
  tool: toolMessageSchema,
} as const;

export type SystemMessage = z.infer<typeof systemMessageSchema>;
export type UserMessage = z.infer<typeof userMessageSchema>;
export type AssistantMessage = z.infer<typeof assistantMessageSchema>;
export type ToolMessage = z.infer<typeof toolMessageSchema>;
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type WireToolCall = z.infer<typeof toolCallSchema>;

const METADATA_MAX_PAIRS = 16;
const METADATA_KEY_MAX = 64;
const METADATA_VALUE_MAX = 512;
const SETTINGS_VALUE_MAX = 8192;

export const metadataSchema = z
  .record(z.string().max(METADATA_KEY_MAX, `Metadata keys are at most ${METADATA_KEY_MAX} characters.`), z.string())
  .superRefine((metadata, context) => {
    const entries = Object.entries(metadata);
    if (entries.length > METADATA_MAX_PAIRS) {
      context.addIssue({ code: "custom", message: `Metadata holds at most ${METADATA_MAX_PAIRS} pairs.` });
    }
    for (const [key, value] of entries) {
      const limit = key === "graph_runtime_settings" ? SETTINGS_VALUE_MAX : METADATA_VALUE_MAX;
      if (value.length > limit) {
        context.addIssue({ code: "custom", path: [key], message: `Metadata values are at most ${limit} characters.` });
      }
    }
  });

/** OpenAI's rule for function names, on both APIs. */
export const functionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/u, "must be 1-64 letters, digits, underscores or dashes");

const functionTool = z.strictObject({
  type: z.literal("function"),
  function: z.object({
    name: functionName,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) }),
  z.object({ type: z.literal("allowed_tools"), allowed_tools: z.record(z.string(), z.unknown()) }),
]);

const jsonObject = z.record(z.string(), z.unknown());

/**
 * Every standard field is accepted and handed to the graph adapters in the request object;
 * the service itself acts on `model`, `messages`, `stream`, `stream_options`, `metadata`.
 */
export const chatCompletionRequestSchema = z.strictObject({
  model: z.string().min(1),
  messages: z.array(z.unknown()).min(1, "At least one message is required."),
  stream: z.boolean().nullish(),
  stream_options: z.strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).nullish(),
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  metadata: metadataSchema.nullish(),
  user: z.string().optional(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: z.int().positive().nullish(),
  max_completion_tokens: z.int().positive().nullish(),
  n: z.literal(1, "Only n = 1 is supported.").nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4, "holds at most 4 sequences")]).nullish(),
  seed: z.int().nullish(),
  response_format: responseFormatSchema.nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  logit_bias: z.record(z.string(), z.number()).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  store: z.boolean().nullish(),
  reasoning_effort: reasoningEffortSchema.nullish(),
  service_tier: z.string().nullish(),
  modalities: z.array(z.string()).nullish(),
  audio: jsonObject.nullish(),
  prediction: jsonObject.nullish(),
  web_search_options: jsonObject.optional(),
  verbosity: z.string().nullish(),
  prompt_cache_key: z.string().optional(),
  safety_identifier: z.string().optional(),
});

export type ChatCompletionRequestBody = z.infer<typeof chatCompletionRequestSchema>;

/**
 * The validated request the runs and the graph adapters see: messages typed per role, and the
 * OpenAI parameters normalised (the same object whichever API the request came on).
 */
export type ChatCompletionRequest = Omit<ChatCompletionRequestBody, "messages" | "metadata"> & {
  messages: ChatMessage[];
  metadata: Record<string, string>;
  parameters: RequestParameters;
  /**
   * A paused run's questions reach this client as the answer's text, and its next message
   * answers them (a client with tools of its own and no `graph_interrupt`: Claude Code, Codex).
   */
  interruptsAsText?: boolean;
};

/** Deprecated fields refused on purpose, with the replacement to name in the error. */
export const LEGACY_FIELDS: Record<string, string> = {
  functions: "tools",
  function_call: "tool_choice",
};
