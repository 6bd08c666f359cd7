import { z } from "zod";
import { reasoningParamSchema, textFormatSchema } from "./parameters.js";
import { functionName, metadataSchema } from "./request.js";

// The Responses API request body (`POST /responses`), validated with our own schema: the
// published one matches a user message with content parts twice in `InputItem`'s oneOf, so
// a strict JSON Schema validator would refuse valid requests. Top-level objects are strict;
// items keep unknown fields out, since clients echo output items back with their ids and status.

const inputText = z.object({ type: z.literal("input_text"), text: z.string() });
const inputImage = z.object({
  type: z.literal("input_image"),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(["auto", "low", "high"]).nullish(),
});
const inputFile = z.object({
  type: z.literal("input_file"),
  file_data: z.string().nullish(),
  file_id: z.string().nullish(),
  file_url: z.string().nullish(),
  filename: z.string().nullish(),
});
const outputText = z.object({ type: z.literal("output_text"), text: z.string() });
const refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });

export const inputContentPart = z.discriminatedUnion("type", [inputText, inputImage, inputFile, outputText, refusal]);

const messageItem = z.object({
  type: z.literal("message").optional(),
  role: z.enum(["user", "system", "developer", "assistant"]),
  content: z.union([z.string(), z.array(inputContentPart)]),
});
const functionCallItem = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutputItem = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(inputContentPart)]),
});
const itemReference = z.object({ type: z.literal("item_reference"), id: z.string() });
/** What `/responses/compact` put in place of the turns it compacted (opaque to the client). */
const compactionItem = z.object({
  type: z.literal("compaction"),
  id: z.string().nullish(),
  encrypted_content: z.string().max(10_485_760),
});
/** Asks for the conversation so far compacted instead of an answer (Codex's remote compaction); the last item. */
const compactionTriggerItem = z.object({ type: z.literal("compaction_trigger") });
/** A reasoning item a client sends back (Codex, the Agents SDK): a model's reasoning is not its input. */
const reasoningItem = z.object({ type: z.literal("reasoning") });

export const inputItemSchema = z.union([
  messageItem,
  functionCallItem,
  functionCallOutputItem,
  itemReference,
  compactionItem,
  compactionTriggerItem,
  reasoningItem,
]);

/** `POST /responses/compact`: the conversation to compact, as a response request names it. */
export const compactRequestSchema = z.strictObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.unknown())]).nullish(),
  previous_response_id: z.string().nullish(),
  instructions: z.string().nullish(),
  prompt_cache_key: z.string().max(64).nullish(),
});

const functionTool = z.strictObject({
  type: z.literal("function"),
  name: functionName,
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

/**
 * Tools the graph cannot run, accepted and not offered to it: OpenAI's hosted tools (Codex
 * offers `web_search`), and a `namespace` of tools (Codex's sub-agent tools), whose calls the
 * client routes by the namespace, which a graph's function call does not carry.
 */
const HOSTED_TOOL_TYPES = [
  "web_search",
  "web_search_preview",
  "web_search_2025_08_26",
  "web_search_preview_2025_03_11",
  "file_search",
  "code_interpreter",
  "image_generation",
  "computer_use",
  "computer_use_preview",
  "mcp",
  "local_shell",
  "shell",
  "apply_patch",
  "custom",
  "tool_search",
  "namespace",
] as const;
const hostedTool = z.looseObject({ type: z.enum(HOSTED_TOOL_TYPES) });
const tool = z.union([functionTool, hostedTool], {
  error: (issue) =>
    `Invalid value: ${JSON.stringify((issue.input as { type?: unknown } | undefined)?.type)}. Supported values are: 'function' and OpenAI's hosted tool types (accepted, not offered to the graph).`,
});

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), name: z.string() }),
  z.object({ type: z.literal("allowed_tools"), mode: z.string(), tools: z.array(z.record(z.string(), z.unknown())) }),
]);

/**
 * Every standard field is accepted; the fields asking for what a stateless server cannot do
 * (`background: true`, `conversation`, a non-empty `include`) are refused by the parser with
 * a sentence saying so, not here.
 */
export const createResponseSchema = z.strictObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.unknown())]),
  instructions: z.string().nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  metadata: metadataSchema.nullish(),
  // Codex sends its installation, session and turn ids on every request: accepted, not used.
  client_metadata: z.record(z.string(), z.unknown()).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.strictObject({ include_obfuscation: z.boolean().optional() }).nullish(),
  user: z.string().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  max_output_tokens: z.int().min(16, "must be at least 16").nullish(),
  text: z
    .strictObject({
      format: textFormatSchema.nullish(),
      verbosity: z.enum(["low", "medium", "high"]).nullish(),
    })
    .nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  conversation: z.unknown().optional(),
  background: z.boolean().nullish(),
  include: z.array(z.string()).nullish(),
  reasoning: reasoningParamSchema.nullish(),
  truncation: z.enum(["auto", "disabled"]).nullish(),
  service_tier: z.enum(["auto", "default", "flex", "priority", "scale"]).nullish(),
  safety_identifier: z.string().max(64).nullish(),
  prompt_cache_key: z.string().max(64).nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  max_tool_calls: z.int().positive().nullish(),
});

export type CreateResponseBody = z.infer<typeof createResponseSchema>;
export type FunctionTool = z.infer<typeof functionTool>;

/** The function tools of a request: what the graph is offered (hosted and namespaced tools are not). */
export function functionToolsOf(body: Pick<CreateResponseBody, "tools">): FunctionTool[] {
  return (body.tools ?? []).filter((tool): tool is FunctionTool => tool.type === "function");
}
export type InputItem = z.infer<typeof inputItemSchema>;
export type InputContentPart = z.infer<typeof inputContentPart>;
