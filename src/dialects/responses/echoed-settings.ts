import { type CreateResponseBody, type FunctionTool, functionToolsOf } from "../../wire/responses-request.js";
import type { EchoedFunctionTool, EchoedTextFormat, ResponseObject } from "../../wire/responses-response.js";

/** The response fields that echo the request's settings. */
type EchoedSettings = Pick<
  ResponseObject,
  | "instructions"
  | "metadata"
  | "parallel_tool_calls"
  | "previous_response_id"
  | "temperature"
  | "top_p"
  | "presence_penalty"
  | "frequency_penalty"
  | "top_logprobs"
  | "max_output_tokens"
  | "max_tool_calls"
  | "truncation"
  | "text"
  | "reasoning"
  | "service_tier"
  | "safety_identifier"
  | "prompt_cache_key"
  | "tool_choice"
  | "tools"
>;

function textFormat(format: NonNullable<CreateResponseBody["text"]>["format"]): EchoedTextFormat {
  if (format == null || format.type === "text") return { type: "text" };
  if (format.type === "json_object") return { type: "json_object" };
  return { type: "json_schema", name: format.name, description: format.description ?? null, schema: null, strict: format.strict ?? false };
}

function tool(input: FunctionTool): EchoedFunctionTool {
  return {
    type: "function",
    name: input.name,
    description: input.description ?? null,
    parameters: input.parameters ?? null,
    strict: input.strict ?? null,
  };
}

/**
 * Every setting in effect, as the response object echoes it: the value the request gave, or
 * the default the server applied (OpenAI's defaults: temperature and top_p 1, no penalties,
 * text format, medium verbosity, no truncation, the default service tier). Never null where
 * Open Responses asks for a value.
 */
export function echoedSettings(body: CreateResponseBody): EchoedSettings {
  const reasoning = body.reasoning;
  return {
    instructions: body.instructions ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    presence_penalty: body.presence_penalty ?? 0,
    frequency_penalty: body.frequency_penalty ?? 0,
    top_logprobs: body.top_logprobs ?? 0,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    truncation: body.truncation ?? "disabled",
    text: { format: textFormat(body.text?.format), verbosity: body.text?.verbosity ?? "medium" },
    reasoning:
      reasoning == null ? null : { effort: reasoning.effort ?? null, summary: reasoning.summary ?? reasoning.generate_summary ?? null },
    service_tier: body.service_tier ?? "default",
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    tool_choice: body.tool_choice ?? "auto",
    // The tools the graph was offered: hosted and namespaced ones are not among them.
    tools: functionToolsOf(body).map(tool),
  };
}
