// The Responses API shapes this service sends. They follow the official schemas
// (`Response`, `ResponseStreamEvent`); the `graph_chat_serve` extension rides on standard
// items and events only, never as an event type of its own.

import type { ClientEventWire } from "./response.js";

export interface UrlCitationOut {
  type: "url_citation";
  url: string;
  title: string;
  start_index: number;
  end_index: number;
}

export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: UrlCitationOut[];
  logprobs: [];
}

/** The extension on a commentary item or an in-progress event. */
export interface ResponsesExtension {
  schema_version: 1;
  event: ClientEventWire;
}

export interface MessageItem {
  type: "message";
  id: string;
  role: "assistant";
  status: "in_progress" | "completed" | "incomplete";
  phase: "commentary" | "final_answer";
  content: OutputTextPart[];
  graph_chat_serve?: ResponsesExtension;
}

export interface FunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed";
}

/** Reasoning before the answer: a summary of it, or (from models that show it) the reasoning itself. */
export interface ReasoningItem {
  type: "reasoning";
  id: string;
  status: "in_progress" | "completed" | "incomplete";
  summary: { type: "summary_text"; text: string }[];
  content?: { type: "reasoning_text"; text: string }[];
}

/** What a `compaction_trigger` request answers with: the conversation so far, compacted (opaque to the client). */
export interface CompactionItem {
  type: "compaction";
  id: string;
  encrypted_content: string;
  created_by?: string;
}

export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem | CompactionItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  completed_at: number | null;
  status: "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";
  model: string;
  output: OutputItem[];
  error: { code: "server_error" | "rate_limit_exceeded"; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: string | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  /** The settings in effect: what the request gave, or the defaults applied. */
  temperature: number;
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  truncation: "auto" | "disabled";
  text: { format: EchoedTextFormat; verbosity: "low" | "medium" | "high" };
  reasoning: { effort: string | null; summary: string | null } | null;
  service_tier: string;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  tool_choice: unknown;
  tools: EchoedFunctionTool[];
  /** Null until the run has reported it (and when no model reported any). */
  usage: ResponsesUsage | null;
  /** Whether the response is stored (`store`, default true), so it can be retrieved and continued. */
  store: boolean;
  /** Whether it runs in the background: queued, worked by any process, retrieved and reattached later. */
  background: boolean;
  /** The conversation the response belongs to, when the request named one. */
  conversation?: { id: string };
}

/**
 * The echoed text format. Open Responses requires a json_schema format's `schema` to be null
 * in the response (OpenAI's schema wants the object); chat-serve follows Open Responses.
 */
export type EchoedTextFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; description: string | null; schema: null; strict: boolean };

/** A function tool as the response echoes it: every field present, null where not given. */
export interface EchoedFunctionTool {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

/** One server-sent event of a streamed response: its `event:` name is its `type`. */
export type ResponseStreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;
