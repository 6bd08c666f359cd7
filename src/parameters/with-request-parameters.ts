import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessageChunk } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import type { RequestParameters, ResponseFormat } from "../wire/parameters.js";
import { type NodeConfig, requestParameters } from "./request-parameters.js";

/** The sampling parameters LangChain chat models take as constructor fields, by their LangChain names. */
const SAMPLING_FIELDS = ["temperature", "topP", "maxTokens", "presencePenalty", "frequencyPenalty"] as const;

type ChatModelClass = new (fields: Record<string, unknown>) => BaseChatModel;

/**
 * A copy of the model with other sampling fields. LangChain chat models take temperature,
 * top_p, the token limit and the penalties when they are made, not per call, so a request's
 * values need a model of their own: made with the original's constructor fields (ChatOpenAI
 * keeps them as `fields`, other models as `lc_kwargs`) and this request's values over them.
 */
function withSampling(model: BaseChatModel, sampling: Record<string, number>): BaseChatModel {
  const original = (model as unknown as { fields?: Record<string, unknown> }).fields ?? model.lc_kwargs;
  // ChatOpenAI reads maxCompletionTokens before maxTokens: the request's limit must win.
  const fields = { ...original, ...("maxTokens" in sampling ? { maxCompletionTokens: undefined } : {}), ...sampling };
  return new (model.constructor as ChatModelClass)(fields);
}

/** `response_format` as OpenAI's chat models take it. */
function openAIResponseFormat(format: Exclude<ResponseFormat, { type: "text" }>): Record<string, unknown> {
  if (format.type === "json_object") return { type: "json_object" };
  const { type: _type, ...jsonSchema } = format;
  return { type: "json_schema", json_schema: jsonSchema };
}

function toolChoice(choice: RequestParameters["toolChoice"]): string | undefined {
  return typeof choice === "object" ? choice.name : choice;
}

/**
 * The model, with the OpenAI parameters of the run's request applied: sampling (temperature,
 * top_p, the token limit, penalties) on a copy of the model, `stop`, `seed`, the reasoning
 * effort and a JSON `response_format` as call options, and the client's tools bound with its
 * `tool_choice` and `parallel_tool_calls`. Without parameters, the model itself. Pass the
 * node's config (its second argument) in, and to the call as always.
 *
 * Works with chat models whose constructor takes their options object (ChatOpenAI,
 * ChatAnthropic, ChatOllama, chat-serve's ScriptedChatModel and most others); a model that
 * has no `bindTools` gets no tools. `seed`, `response_format` and `reasoning` are OpenAI call
 * options: other providers ignore what they do not know.
 *
 * @example
 * ```ts
 * .addNode("respond", async (state, config) => ({
 *   messages: [await withRequestParameters(model, config).invoke(state.messages, config)],
 * }))
 * ```
 */
export function withRequestParameters(model: BaseChatModel, config: NodeConfig): Runnable<BaseLanguageModelInput, AIMessageChunk> {
  const parameters = requestParameters(config);
  if (Object.keys(parameters).length === 0) return model;
  const sampling: Record<string, number> = {};
  for (const field of SAMPLING_FIELDS) {
    const value = parameters[field];
    if (value !== undefined) sampling[field] = value;
  }
  const target = Object.keys(sampling).length > 0 ? withSampling(model, sampling) : model;
  const format = parameters.responseFormat;
  const callOptions: Record<string, unknown> = {
    ...(parameters.stop === undefined ? {} : { stop: parameters.stop }),
    ...(parameters.seed === undefined ? {} : { seed: parameters.seed }),
    ...(format === undefined || format.type === "text" ? {} : { response_format: openAIResponseFormat(format) }),
    ...(parameters.reasoning === undefined ? {} : { reasoning: parameters.reasoning }),
  };
  const tools = parameters.tools ?? [];
  if (tools.length > 0 && typeof target.bindTools === "function") {
    const choice = toolChoice(parameters.toolChoice);
    return target.bindTools(
      tools.map(({ name, description, parameters: schema, strict }) => ({
        type: "function" as const,
        function: {
          name,
          ...(description === undefined ? {} : { description }),
          parameters: schema ?? { type: "object", properties: {} },
          ...(strict === undefined ? {} : { strict }),
        },
      })),
      {
        ...callOptions,
        ...(choice === undefined ? {} : { tool_choice: choice }),
        ...(parameters.parallelToolCalls === undefined ? {} : { parallel_tool_calls: parameters.parallelToolCalls }),
      } as Partial<BaseChatModel["ParsedCallOptions"]>,
    );
  }
  return Object.keys(callOptions).length === 0 ? target : target.withConfig(callOptions as Partial<BaseChatModel["ParsedCallOptions"]>);
}
