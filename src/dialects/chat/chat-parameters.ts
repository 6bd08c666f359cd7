import { checkParameters } from "../../parameters/validate-parameters.js";
import { present } from "../../util/present.js";
import type { RequestParameters, ResponseFormat } from "../../wire/parameters.js";
import type { ChatCompletionRequestBody } from "../../wire/request.js";

function responseFormat(format: NonNullable<ChatCompletionRequestBody["response_format"]>): ResponseFormat {
  if (format.type !== "json_schema") return { type: format.type };
  const { name, description, schema, strict } = format.json_schema;
  return {
    type: "json_schema",
    name,
    ...(description === undefined ? {} : { description }),
    ...(schema === undefined ? {} : { schema }),
    ...(strict == null ? {} : { strict }),
  };
}

/**
 * The OpenAI parameters of a chat-completions body, normalised: `max_completion_tokens` (or
 * the older `max_tokens`) is `maxTokens`, a single `stop` string is a list of one, and so on.
 */
export function chatParameters(body: ChatCompletionRequestBody): RequestParameters {
  const choice = body.tool_choice;
  const parameters = present<RequestParameters>({
    temperature: body.temperature,
    topP: body.top_p,
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
    seed: body.seed,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    responseFormat: body.response_format == null ? undefined : responseFormat(body.response_format),
    reasoning: body.reasoning_effort == null ? undefined : { effort: body.reasoning_effort },
    tools: body.tools?.map(({ function: tool }) =>
      present({ name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict }),
    ),
    toolChoice:
      typeof choice === "string" ? choice : choice?.type === "function" ? { type: "function", name: choice.function.name } : undefined,
    parallelToolCalls: body.parallel_tool_calls,
  });
  checkParameters(parameters, {
    toolName: (index) => `tools.${index}.function.name`,
    toolChoice: "tool_choice.function.name",
    schema: "response_format.json_schema.schema",
  });
  return parameters;
}
