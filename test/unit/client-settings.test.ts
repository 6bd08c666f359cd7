import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { ResearchSettings } from "../../demo/graphs/research.js";
import { InvalidClientSettingsError } from "../../src/errors/catalogue.js";
import { RegistrationError } from "../../src/errors/developer-errors.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { defineClientSettings } from "../../src/settings/client-settings.js";
import { echoGraph } from "../fixtures/graphs.js";

const Settings = defineClientSettings(
  z.strictObject({
    depth: z.int().min(1).max(5).default(2),
    audience: z.enum(["general", "expert"]).default("general"),
    tags: z.array(z.string()).default(["a"]),
  }),
);

const withSettings = (value?: string): { metadata: Record<string, string> } => ({
  metadata: value === undefined ? {} : { graph_runtime_settings: value },
});

function rejectsAtRegistration(schema: z.ZodType, pattern: RegExp) {
  const settings = defineClientSettings(schema as z.ZodObject);
  assert.throws(
    () => new GraphRegistry({ research: { graph: echoGraph, description: "x", clientSettings: settings } }),
    (error: Error) => {
      assert.ok(error instanceof RegistrationError, String(error));
      assert.match(error.message, /^model 'research': clientSettings: /);
      assert.match(error.message, pattern);
      return true;
    },
  );
}

describe("registration rejects settings models that are not a strict public contract", () => {
  test("not strict: extra keys stripped or allowed", () => {
    rejectsAtRegistration(z.object({ a: z.int().default(1) }), /must be strict/);
    rejectsAtRegistration(z.looseObject({ a: z.int().default(1) }), /must be strict/);
  });
  test("not an object schema at all", () => {
    rejectsAtRegistration(z.string() as never, /zod object schema/);
  });
  test("a field without a default, and an optional field", () => {
    rejectsAtRegistration(z.strictObject({ a: z.int() }), /every field needs a valid default: a:/);
    rejectsAtRegistration(z.strictObject({ a: z.int().optional() }), /field 'a' needs a default/);
  });
  test("a default that fails validation", () => {
    rejectsAtRegistration(z.strictObject({ a: z.int().min(3).default(1) }), /needs a valid default: a: Too small/);
  });
  test("defaults that are not JSON", () => {
    rejectsAtRegistration(z.strictObject({ a: z.unknown().default(() => Infinity) }), /must be JSON: a is Infinity/);
    rejectsAtRegistration(z.strictObject({ a: z.any().default(() => () => 1) }), /must be JSON: a is a function/);
  });
  test("anything that cannot round-trip through JSON: transforms, dates, bigints, coercion", () => {
    rejectsAtRegistration(
      z.strictObject({
        a: z
          .string()
          .default("x")
          .transform((text) => text.length),
      }),
      /Transforms/,
    );
    rejectsAtRegistration(z.strictObject({ a: z.date().default(() => new Date(0)) }), /Date/);
    rejectsAtRegistration(z.strictObject({ a: z.bigint().default(1n) }), /BigInt/);
    rejectsAtRegistration(z.strictObject({ a: z.coerce.number().default(1) }), /must not coerce/);
  });
  test("a value that is not a settings model at all", () => {
    assert.throws(
      () => new GraphRegistry({ r: { graph: echoGraph, description: "x", clientSettings: { depth: 1 } as never } }),
      /model 'r': clientSettings: must be made with defineClientSettings/,
    );
  });
});

describe("a valid settings model", () => {
  test("defaults() is a deep copy of the validated defaults", () => {
    const first = Settings.defaults();
    assert.deepEqual(first, { depth: 2, audience: "general", tags: ["a"] });
    first.tags.push("changed");
    assert.deepEqual(Settings.defaults().tags, ["a"]);
  });

  test("the JSON Schema is strict and the defaults validate against it", () => {
    const descriptor = Settings.descriptor();
    assert.equal(descriptor.schema_version, 1);
    assert.equal(descriptor.json_schema.additionalProperties, false);
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(descriptor.json_schema);
    assert.ok(validate(descriptor.defaults), ajv.errorsText(validate.errors));
    assert.equal(validate({ ...descriptor.defaults, extra: 1 }), false);
    assert.equal(validate({ depth: 9 }), false);
    const research = ResearchSettings.descriptor();
    assert.ok(ajv.compile(research.json_schema)(research.defaults));
  });

  test("validateRequest: omitted values take the defaults; sent ones are merged over them; the result is frozen", () => {
    assert.deepEqual(Settings.validateRequest(withSettings()), { depth: 2, audience: "general", tags: ["a"] });
    const settings = Settings.validateRequest(withSettings('{"depth":4}'));
    assert.deepEqual(settings, { depth: 4, audience: "general", tags: ["a"] });
    assert.ok(Object.isFrozen(settings) && Object.isFrozen(settings.tags));
    assert.ok(Object.isFrozen(Settings.validateRequest({ metadata: null })));
  });

  const invalid: [string, string, RegExp][] = [
    ["a wrong type", '{"depth":"3"}', /depth: Invalid input: expected number, received string/],
    ["a value out of range", '{"depth":9}', /depth: Too big/],
    ["an unknown key", '{"colour":"red"}', /colour/],
    ["malformed JSON", "{depth: 3", /not valid JSON/],
    ["NaN", '{"depth":NaN}', /not valid JSON/],
    ["Infinity from a huge number", '{"depth":1e999}', /depth is Infinity/],
    ["an array instead of an object", "[1]", /must be a JSON object/],
    ["a JSON string instead of an object", '"depth=3"', /must be a JSON object/],
  ];
  for (const [name, text, message] of invalid) {
    test(`validateRequest rejects ${name} with invalid_client_settings`, () => {
      assert.throws(
        () => Settings.validateRequest(withSettings(text)),
        (error: Error) => {
          assert.ok(error instanceof InvalidClientSettingsError);
          assert.equal(error.status, 400);
          assert.equal(error.param, "metadata.graph_runtime_settings");
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }
});
