import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { z } from "zod";
import { ResearchSettings, graph as researchGraph } from "../../demo/graphs/research.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { defineClientSettings } from "../../src/settings/client-settings.js";
import type { ChatCompletionRequest } from "../../src/wire/request.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const Tone = defineClientSettings(z.strictObject({ tone: z.enum(["calm", "loud"]).default("calm") }));
const AppContext = z.object({ tone: z.string(), user: z.string().nullable(), requestModel: z.string() });

/** A graph that answers with what it saw in runtime.context and in configurable. */
function reportingGraph(contextSchema?: z.ZodType) {
  const seen: { configurable?: Record<string, unknown> } = {};
  // The context schema is what the registration rule inspects; typed loosely on purpose.
  const builder = new StateGraph(MessagesAnnotation, contextSchema as z.ZodObject);
  const graph = builder
    .addNode("report", (_state, runtime) => {
      seen.configurable = runtime.configurable;
      return { messages: [new AIMessage(JSON.stringify(runtime.context ?? null))] };
    })
    .addEdge(START, "report")
    .addEdge("report", END)
    .compile();
  return { graph, seen };
}

let server: TestServer;
let client: OpenAI;
const plainReport = reportingGraph();
const factoryReport = reportingGraph(AppContext);

before(async () => {
  server = await startTestServer({
    research: { graph: researchGraph, description: "Research", streamableNodeNames: ["answer"], clientSettings: ResearchSettings },
    "sync-factory": {
      graph: factoryReport.graph,
      description: "sync factory",
      clientSettings: Tone,
      contextFactory: (request: ChatCompletionRequest, settings) => ({
        tone: String(settings?.tone),
        user: request.user ?? null,
        requestModel: request.model,
      }),
    },
    "async-factory": {
      graph: reportingGraph(AppContext).graph,
      description: "async factory",
      clientSettings: Tone,
      contextFactory: async (request: ChatCompletionRequest, settings) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { tone: `${settings?.tone}!`, user: null, requestModel: request.model };
      },
    },
    "null-factory": { graph: plainReport.graph, description: "null factory", contextFactory: () => null },
    "factory-without-schema": {
      graph: reportingGraph().graph,
      description: "returns a context its graph cannot declare",
      contextFactory: () => ({ anything: true }),
    },
  });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(() => server.close());

const ask = (model: string, metadata?: Record<string, string>, extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({ model, messages: [{ role: "user", content: "What is rain?" }], metadata, ...extra });

describe("client settings over the wire", () => {
  test("omitted settings take the advertised defaults", async () => {
    const completion = await ask("research");
    assert.equal(completion.choices[0]?.message.content, "I looked at 2 sources about What is rain and explain it in plain words.");
  });

  test("sent settings change what the graph sees, complete and streaming", async () => {
    const metadata = { graph_runtime_settings: JSON.stringify({ depth: 1, audience: "child" }) };
    const expected = "I looked at 1 source about What is rain and explain it simply enough for a child.";
    assert.equal((await ask("research", metadata)).choices[0]?.message.content, expected);
    const stream = await client.chat.completions.create({
      model: "research",
      messages: [{ role: "user", content: "What is rain?" }],
      metadata,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.equal(text, expected);
  });

  for (const [name, value, field] of [
    ["a wrong type", '{"depth":"deep"}', "depth"],
    ["an unknown key", '{"detail":3}', "detail"],
    ["malformed JSON", '{"depth":', "JSON"],
    ["NaN", '{"depth":NaN}', "JSON"],
  ] as const) {
    test(`${name} is a 400 invalid_client_settings naming the field`, async () => {
      await assert.rejects(ask("research", { graph_runtime_settings: value }), (error: InstanceType<typeof OpenAI.BadRequestError>) => {
        assert.equal(error.status, 400);
        assert.equal(error.code, "invalid_client_settings");
        assert.equal(error.param, "metadata.graph_runtime_settings");
        assert.match(error.message, new RegExp(field));
        return true;
      });
    });
  }

  test("a stream with invalid settings fails before any byte is streamed", async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "research",
        stream: true,
        messages: [{ role: "user", content: "x" }],
        metadata: { graph_runtime_settings: '{"depth":0}' },
      }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, "invalid_client_settings");
  });

  test("retrieval advertises the descriptor; the list never does", async () => {
    const model = (await client.models.retrieve("research")) as unknown as { graph_chat_serve: Record<string, any> };
    assert.deepEqual(model.graph_chat_serve.client_settings, ResearchSettings.descriptor());
    assert.deepEqual(model.graph_chat_serve.client_settings.defaults, { depth: 2, audience: "general" });
    const list = (await (await fetch(`${server.baseURL}/models`)).json()) as { data: { graph_chat_serve: object }[] };
    for (const item of list.data) assert.equal("client_settings" in item.graph_chat_serve, false);
  });
});

describe("runtime context", () => {
  test("a sync context factory receives the request and the validated settings", async () => {
    const completion = await ask("sync-factory", { graph_runtime_settings: '{"tone":"loud"}' }, { user: "ada" });
    assert.deepEqual(JSON.parse(completion.choices[0]?.message.content ?? ""), {
      tone: "loud",
      user: "ada",
      requestModel: "sync-factory",
    });
  });

  test("an async context factory works the same way, and settings are validated before it runs", async () => {
    const completion = await ask("async-factory");
    assert.equal(JSON.parse(completion.choices[0]?.message.content ?? "").tone, "calm!");
    await assert.rejects(ask("async-factory", { graph_runtime_settings: '{"tone":"shouty"}' }), /tone/);
  });

  test("a factory returning null runs the graph without a context", async () => {
    assert.equal((await ask("null-factory")).choices[0]?.message.content, "null");
  });

  test("a non-null context for a graph without a context schema is a graph configuration error", async () => {
    await assert.rejects(ask("factory-without-schema"), (error: InstanceType<typeof OpenAI.InternalServerError>) => {
      assert.equal(error.status, 500);
      assert.equal(error.code, "graph_configuration_error");
      return true;
    });
  });

  test("no request field is ever placed into configurable", async () => {
    // Needles no id or hash can contain by chance (they hold letters beyond a–f).
    await ask("sync-factory", { graph_runtime_settings: '{"tone":"loud"}', session_id: "session-zqx" }, { user: "user-zqy" });
    const configurable = factoryReport.seen.configurable ?? {};
    const serialized = JSON.stringify(Object.fromEntries(Object.entries(configurable).filter(([key]) => !key.startsWith("__"))));
    for (const needle of ["user-zqy", "loud", "What is rain", "session-zqx", "sync-factory"]) {
      assert.doesNotMatch(serialized, new RegExp(needle), `configurable carries '${needle}': ${serialized}`);
    }
  });

  test("registration refuses settings without a factory when the graph's context schema is not the settings schema", async () => {
    for (const graph of [reportingGraph().graph, reportingGraph(AppContext).graph]) {
      const registry = new GraphRegistry({ mismatch: { graph, description: "x", clientSettings: Tone } });
      await assert.rejects(registry.validateAll(), /model 'mismatch'.*must declare its client settings as its context schema/);
    }
    const matching = new StateGraph(MessagesAnnotation, Tone.schema)
      .addNode("n", () => ({ messages: [new AIMessage("ok")] }))
      .addEdge(START, "n")
      .addEdge("n", END)
      .compile();
    await new GraphRegistry({ ok: { graph: matching, description: "x", clientSettings: Tone } }).validateAll();
  });
});
