import { checkParameters } from "../../parameters/validate-parameters.js";
import { present } from "../../util/present.js";
import type { RequestParameters, ResponseFormat } from "../../wire/parameters.js";
import { type CreateResponseBody, functionToolsOf } from "../../wire/responses-request.js";

function responseFormat(format: NonNullable<NonNullable<CreateResponseBody["text"]>["format"]>): ResponseFormat {
  if (format.type !== "json_schema") return { type: format.type };
  return {
    type: "json_schema",
    name: format.name,
    schema: format.schema,
    ...(format.description == null ? {} : { description: format.description }),
    ...(format.strict == null ? {} : { strict: format.strict }),
  };
}

/** The OpenAI parameters of a Responses body, in the form chat completions' are normalised to. */
export function responsesParameters(body: CreateResponseBody): RequestParameters {
  const choice = body.tool_choice;
  const reasoning =
    body.reasoning == null
      ? undefined
      : present({
          effort: body.reasoning.effort,
          summary: body.reasoning.summary ?? body.reasoning.generate_summary,
        });
  const parameters = present<RequestParameters>({
    temperature: body.temperature,
    topP: body.top_p,
    maxTokens: body.max_output_tokens,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    responseFormat: body.text?.format == null ? undefined : responseFormat(body.text.format),
    reasoning: reasoning === undefined || Object.keys(reasoning).length === 0 ? undefined : reasoning,
    tools: (body.tools == null ? undefined : functionToolsOf(body))?.map((tool) =>
      present({ name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict }),
    ),
    toolChoice: typeof choice === "string" ? choice : choice?.type === "function" ? { type: "function", name: choice.name } : undefined,
    parallelToolCalls: body.parallel_tool_calls,
  });
  checkParameters(parameters, { toolName: (index) => `tools.${index}.name`, toolChoice: "tool_choice.name", schema: "text.format.schema" });
  return parameters;
}
