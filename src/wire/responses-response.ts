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

export type OutputItem = MessageItem | FunctionCallItem;

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
  status: "in_progress" | "completed" | "incomplete" | "failed";
  model: string;
  output: OutputItem[];
  error: { code: "server_error" | "rate_limit_exceeded"; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: string | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  temperature: number | null;
  top_p: number | null;
  tool_choice: unknown;
  tools: unknown[];
  usage?: ResponsesUsage;
  store: false;
  background: false;
}

/** One server-sent event of a streamed response: its `event:` name is its `type`. */
export type ResponseStreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;
