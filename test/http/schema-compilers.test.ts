import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { ChatServe } from "../../src/app/chat-serve.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { echoGraph } from "../fixtures/graphs.js";

// This file runs in a process of its own, so the module cache shows what chat-serve loaded.
const loaded = (name: string) => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes(`/${name}/`));
const COMPILERS = ["@fastify/ajv-compiler", "@fastify/fast-json-stringify-compiler"];

test("an app chat-serve creates loads no JSON-schema compiler: its routes have no schema to compile", async () => {
  const serve = new ChatServe({ graphs: new GraphRegistry({ echo: { graph: echoGraph(), description: "Echo" } }) });
  const app = await serve.bind({ prefix: "/v1", docs: true, playground: true });
  try {
    await app.ready();
    const response = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: { model: "echo", messages: [{ role: "user", content: "hi" }] },
    });
    assert.equal(response.statusCode, 200);
    assert.equal((await app.inject({ method: "GET", url: "/v1/openapi.json" })).statusCode, 200);
    for (const name of COMPILERS) assert.equal(loaded(name), false, `${name} was loaded`);
  } finally {
    await app.close();
  }
});

test("a route of the user's with a JSON schema is validated and serialized as usual", async () => {
  const serve = new ChatServe({ graphs: new GraphRegistry({ echo: { graph: echoGraph(), description: "Echo" } }) });
  serve.app.post(
    "/greet",
    {
      schema: {
        body: { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 1 } } },
        response: { 200: { type: "object", properties: { greeting: { type: "string" } } } },
      },
    },
    async (request) => ({ greeting: `hello ${(request.body as { name: string }).name}`, dropped: "not in the schema" }),
  );
  const app = await serve.bind({ prefix: "/v1" });
  try {
    await app.ready();
    const bad = await app.inject({ method: "POST", url: "/greet", payload: { name: "" } });
    assert.equal(bad.statusCode, 400);
    const good = await app.inject({ method: "POST", url: "/greet", payload: { name: "Ada" } });
    assert.equal(good.statusCode, 200);
    // fast-json-stringify wrote it: only what the response schema names.
    assert.deepEqual(good.json(), { greeting: "hello Ada" });
    for (const name of COMPILERS) assert.equal(loaded(name), true, `${name} was not loaded`);
  } finally {
    await app.close();
  }
});
