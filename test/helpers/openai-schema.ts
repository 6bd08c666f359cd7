import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

function readSpec(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/${file}`, import.meta.url)), "utf8")) as Record<string, unknown>;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsModule as unknown as (instance: Ajv2020) => void)(ajv);
// Copies of shared/openai-spec/: OpenAI's chat-completions and Responses schemas, and Open
// Responses, the open multi-provider specification of the Responses API (2026-04-24).
ajv.addSchema({ ...readSpec("openai-chat-completions-subset.json"), $id: "openai" });
ajv.addSchema({ ...readSpec("openai-responses-subset.json"), $id: "openai-responses" });
const openResponses = readSpec("open-responses-2026-04-24.json") as { components: { schemas: Record<string, any> } };
ajv.addSchema({ ...openResponses, $id: "open-responses" });

export type OpenAISchemaName =
  | "CreateChatCompletionResponse"
  | "CreateChatCompletionStreamResponse"
  | "ListModelsResponse"
  | "Model"
  | "ErrorResponse";

export type ResponsesSchemaName = "Response" | "ResponseStreamEvent" | "ErrorResponse" | "CreateResponse";

/** Each Open Responses stream event schema, by the event type it names. */
const openResponsesEventSchemas = new Map<string, string>(
  Object.entries(openResponses.components.schemas)
    .filter(([name]) => name.endsWith("StreamingEvent"))
    .map(([name, schema]) => [schema.properties.type.enum[0] as string, name]),
);

function check(schemaRef: string, body: unknown, label: string): void {
  const validate = ajv.getSchema(schemaRef);
  assert.ok(validate, `schema ${schemaRef} is missing from the spec copy`);
  const valid = validate(body);
  assert.ok(
    valid,
    `${label} does not validate: ${ajv.errorsText(validate.errors).slice(0, 1_000)}\n${JSON.stringify(body).slice(0, 2_000)}`,
  );
}

/**
 * The Open Responses schema that stands for one of OpenAI's: the response object, the stream
 * event of that type (an event type Open Responses does not define fails), or for an error
 * body, its `error` object as Open Responses' error payload. Requests are OpenAI's alone.
 */
function checkOpenResponses(name: ResponsesSchemaName, body: unknown): void {
  const ref = (schema: string) => `open-responses#/components/schemas/${schema}`;
  if (name === "Response") check(ref("ResponseResource"), body, "Open Responses ResponseResource");
  if (name === "ErrorResponse") check(ref("ErrorPayload"), (body as { error?: unknown }).error, "Open Responses ErrorPayload");
  if (name === "ResponseStreamEvent") {
    const type = (body as { type?: unknown }).type;
    const schema = openResponsesEventSchemas.get(String(type));
    assert.ok(schema, `Open Responses defines no stream event '${String(type)}'`);
    check(ref(schema), body, `Open Responses ${schema}`);
  }
}

/**
 * Where the two schemas disagree about a response object, chat-serve follows Open Responses
 * (see the README), and OpenAI's check sees what its schema asks for instead: Open Responses
 * requires `usage` (null until known) where OpenAI's allows only an object or no field, and
 * requires an echoed json_schema format's `schema` to be null where OpenAI's wants an object.
 */
function asOpenAISees(body: unknown): unknown {
  const response = body as { usage?: unknown; text?: { format?: { type?: string } } } | null;
  if (response === null || typeof response !== "object") return body;
  const copy = { ...response } as Record<string, any>;
  if (copy.usage === null) delete copy.usage;
  if (response.text?.format?.type === "json_schema") copy.text = { ...response.text, format: { ...response.text.format, schema: {} } };
  return copy;
}

function withResponses(name: ResponsesSchemaName, body: unknown): unknown {
  if (name === "Response") return asOpenAISees(body);
  const response = (body as { response?: unknown } | null)?.response;
  if (name === "ResponseStreamEvent" && response !== undefined) return { ...(body as object), response: asOpenAISees(response) };
  return body;
}

/**
 * Raw reasoning's events: OpenAI names them `response.reasoning_text.delta`/`.done`, Open
 * Responses `response.reasoning.delta`/`.done`; chat-serve sends OpenAI's, which the `openai`
 * SDK's stream helper knows (docs/responses-api.md).
 */
const OPENAI_ONLY = new Set(["response.reasoning_text.delta", "response.reasoning_text.done"]);

/**
 * Asserts that a Responses API body validates against OpenAI's schema and, for what the
 * server sends, against Open Responses too (raw reasoning's events: OpenAI's alone).
 */
export function assertMatchesResponses(name: ResponsesSchemaName, body: unknown): void {
  const type = (body as { type?: unknown } | null)?.type;
  check(`openai-responses#/components/schemas/${name}`, withResponses(name, body), name);
  if (name !== "CreateResponse" && !(name === "ResponseStreamEvent" && OPENAI_ONLY.has(String(type)))) checkOpenResponses(name, body);
}

/**
 * Asserts that an item as the stored-response and conversation lists return it (with its
 * id and status) validates against OpenAI's item schema for its kind and Open Responses'.
 */
export function assertMatchesItem(item: { type?: unknown; role?: unknown }): void {
  const byType: Record<string, [string, string]> = {
    function_call: ["FunctionToolCall", "FunctionCall"],
    function_call_output: ["FunctionToolCallOutputResource", "FunctionCallOutput"],
    message: [item.role === "assistant" ? "OutputMessage" : "InputMessage", "Message"],
  };
  const schemas = byType[String(item.type)];
  assert.ok(schemas, `an item of type '${String(item.type)}'`);
  check(`openai-responses#/components/schemas/${schemas[0]}`, item, schemas[0]);
  check(`open-responses#/components/schemas/${schemas[1]}`, item, `Open Responses ${schemas[1]}`);
}

/** Asserts that a body validates against one schema of the OpenAI spec. */
export function assertMatchesOpenAI(name: OpenAISchemaName, body: unknown): void {
  check(`openai#/components/schemas/${name}`, body, name);
}

/** Asserts that a body validates against one schema of Open Responses (`CompactResource`, `WebSocketErrorEvent`). */
export function assertMatchesOpenResponses(
  name: "CompactResource" | "WebSocketErrorEvent" | "CompactResponseMethodPublicBody",
  body: unknown,
): void {
  check(`open-responses#/components/schemas/${name}`, body, `Open Responses ${name}`);
}
