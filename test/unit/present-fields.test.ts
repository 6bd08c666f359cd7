import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import { describeFirstIssue } from "../../src/util/describe-issue.js";
import { presentFieldsParser } from "../../src/wire/present-fields.js";
import { chatCompletionRequestSchema } from "../../src/wire/request.js";
import { createResponseSchema } from "../../src/wire/responses-request.js";

/** What zod's own parse of the whole object answers, in the words the errors use. */
function zodAnswer(schema: z.ZodObject, body: Record<string, unknown>): string {
  const result = schema.safeParse(body);
  if (result.success) return JSON.stringify(result.data);
  const issue = result.error.issues[0]!;
  if (issue.code === "unrecognized_keys" && issue.path.length === 0) return `unknown ${issue.keys[0]}`;
  return describeFirstIssue(result.error);
}

function presentAnswer(schema: z.ZodObject, body: Record<string, unknown>): string {
  const result = presentFieldsParser(schema)(body);
  if (result.success) return JSON.stringify(result.data);
  if ("unknownField" in result) return `unknown ${result.unknownField}`;
  return describeFirstIssue(result.error, [result.field]);
}

describe("parsing only the fields a body has", () => {
  test("answers what zod's parse of the whole chat request answers", () => {
    const message = { role: "user", content: "hi" };
    const bodies: Record<string, unknown>[] = [
      { model: "echo", messages: [message] },
      { model: "echo", messages: [message], stream: true, stream_options: { include_usage: true }, temperature: 0.5, user: "u" },
      { messages: [message] },
      { model: "echo" },
      { model: "", messages: [] },
      { model: 1, messages: [], colour: "red" },
      { colour: "red", model: "echo", messages: [message] },
      { model: "echo", messages: [message], stream: "yes", temperature: 9 },
      { model: "echo", messages: [message], stop: ["a", "b", "c", "d", "e"] },
      { model: "echo", messages: [message], metadata: { note: 1 } },
      { model: "echo", messages: [message], tools: [{ type: "function", function: { name: "bad name" } }] },
      { model: "echo", messages: [message], stream_options: { include_usage: true, extra: 1 } },
      { model: "echo", messages: [message], n: 2, colour: "red" },
      { model: "echo", messages: [message], temperature: null, seed: null },
      { model: "echo", messages: [message], response_format: { type: "json_schema" } },
    ];
    for (const body of bodies) assert.equal(presentAnswer(chatCompletionRequestSchema, body), zodAnswer(chatCompletionRequestSchema, body));
  });

  test("answers what zod's parse of the whole Responses request answers", () => {
    const bodies: Record<string, unknown>[] = [
      { model: "echo", input: "hi" },
      { model: "echo", input: [{ role: "user", content: "hi" }], store: false, include: [], tools: [], text: {} },
      { input: "hi" },
      { model: "echo" },
      { model: "echo", input: 5, colour: "red" },
      { model: "echo", input: "hi", colour: "red" },
      { model: "echo", input: "hi", instructions: null, temperature: 3 },
    ];
    for (const body of bodies) assert.equal(presentAnswer(createResponseSchema, body), zodAnswer(createResponseSchema, body));
  });

  test("keeps a default for an absent field, and the schema's field order", () => {
    const schema = z.strictObject({ b: z.string().optional(), a: z.number().default(3), c: z.boolean() });
    const result = presentFieldsParser(schema)({ c: true, b: "x" });
    assert.deepEqual(result, { success: true, data: { b: "x", a: 3, c: true } });
    assert.deepEqual(Object.keys((result as { data: object }).data), ["b", "a", "c"]);
  });

  test("refuses a schema it would parse only in part", () => {
    assert.throws(() => presentFieldsParser(z.object({ a: z.string() })), /strict object/);
    assert.throws(() => presentFieldsParser(z.strictObject({ a: z.string() }).refine(() => true) as never), /object-level checks/);
  });
});
