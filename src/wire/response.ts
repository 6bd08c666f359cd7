// The shapes this service sends. They follow the OpenAI OpenAPI schemas (strict about
// `logprobs: null`, `refusal: null` and `finish_reason: null` on non-final chunks); the
// `graph_chat_serve` extension sits beside the standard properties.

export type FinishReason = "stop" | "length" | "tool_calls";

export interface WireToolCallOut {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface UrlCitation {
  type: "url_citation";
  url_citation: { url: string; title: string; start_index: number; end_index: number; cited_text?: string };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number };
}

/**
 * The usage of a run no model reported on (an interrupt, a node's own answer): zeros, where a
 * client parses usage as an object (the AI SDK's OpenAI provider fails the step on `null`).
 */
export const NO_USAGE: Readonly<Usage> = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/**
 * Reasoning beside the answer, under both names clients read: `reasoning_content` (DeepSeek,
 * vLLM, the `openai` SDK's users) and `reasoning` (OpenRouter, Ollama, the AI SDK).
 */
export interface ReasoningFields {
  reasoning_content?: string;
  reasoning?: string;
}

export interface ResponseMessage extends ReasoningFields {
  role: "assistant";
  content: string | null;
  refusal: null;
  tool_calls?: WireToolCallOut[];
  annotations: UrlCitation[];
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: [{ index: 0; message: ResponseMessage; finish_reason: FinishReason; logprobs: null }];
  usage?: Usage;
}

export interface ToolCallDelta {
  index: number;
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChunkDelta extends ReasoningFields {
  role?: "assistant";
  content?: string;
  tool_calls?: ToolCallDelta[];
  annotations?: UrlCitation[];
}

export interface ChunkChoice {
  index: 0;
  delta: ChunkDelta;
  finish_reason: FinishReason | null;
  logprobs: null;
}

export interface ClientEventWire {
  type: "status" | "progress" | "artifact";
  namespace: string[];
  data: Record<string, unknown>;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  graph_chat_serve?: { schema_version: 1; event: ClientEventWire };
  /** The `chat-ui` profile's status for chat UIs (Open WebUI's event object). */
  event?: { type: "status"; data: { description: string; done: boolean; hidden: boolean } };
}

export type WireFeature = "client_events" | "interrupts";

export interface ModelExtensionSummary {
  schema_version: 1;
  description: string;
  features: WireFeature[];
}

export interface ClientSettingsDescriptor {
  schema_version: 1;
  json_schema: Record<string, unknown>;
  defaults: Record<string, unknown>;
}

export interface ModelExtensionFull extends ModelExtensionSummary {
  /** The APIs the model is served on, as paths under the prefix. */
  apis: ("chat/completions" | "responses")[];
  client_settings?: ClientSettingsDescriptor;
  capabilities: Partial<Record<WireFeature, Record<string, unknown>>>;
}

export interface ModelObject<Extension = ModelExtensionSummary> {
  id: string;
  object: "model";
  created: number;
  owned_by: "chat-serve";
  graph_chat_serve: Extension;
}

export interface ModelList {
  object: "list";
  data: ModelObject[];
}

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}
