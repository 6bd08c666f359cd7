import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// A copy of shared/openai-spec/chat-completions-subset.json: the official OpenAI schemas.
const specPath = fileURLToPath(new URL("../fixtures/openai-chat-completions-subset.json", import.meta.url));
const spec = JSON.parse(readFileSync(specPath, "utf8")) as Record<string, unknown>;

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsModule as unknown as (instance: Ajv2020) => void)(ajv);
ajv.addSchema({ ...spec, $id: "openai" });

export type OpenAISchemaName =
  | "CreateChatCompletionResponse"
  | "CreateChatCompletionStreamResponse"
  | "ListModelsResponse"
  | "Model"
  | "ErrorResponse";

// A copy of shared/openai-spec/responses-subset.json: the Responses API schemas.
const responsesSpecPath = fileURLToPath(new URL("../fixtures/openai-responses-subset.json", import.meta.url));
const responsesSpec = JSON.parse(readFileSync(responsesSpecPath, "utf8")) as Record<string, unknown>;
ajv.addSchema({ ...responsesSpec, $id: "openai-responses" });

export type ResponsesSchemaName = "Response" | "ResponseStreamEvent" | "ErrorResponse" | "CreateResponse";

/** Asserts that a body validates against one schema of the Responses API spec. */
export function assertMatchesResponses(name: ResponsesSchemaName, body: unknown): void {
  const validate = ajv.getSchema(`openai-responses#/components/schemas/${name}`);
  assert.ok(validate, `schema ${name} is missing from the spec copy`);
  const valid = validate(body);
  assert.ok(valid, `${name} does not validate: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2_000)}`);
}

/** Asserts that a body validates against one schema of the OpenAI spec. */
export function assertMatchesOpenAI(name: OpenAISchemaName, body: unknown): void {
  const validate = ajv.getSchema(`openai#/components/schemas/${name}`);
  assert.ok(validate, `schema ${name} is missing from the spec copy`);
  const valid = validate(body);
  assert.ok(valid, `${name} does not validate: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
}
