import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { GraphNotFoundError } from "../../src/errors/catalogue.js";
import { RegistrationError } from "../../src/errors/developer-errors.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { echoGraph, nestedStreamGraph } from "../fixtures/graphs.js";

const builder = () =>
  new StateGraph(MessagesAnnotation)
    .addNode("respond", () => ({ messages: [new AIMessage("built")] }))
    .addEdge(START, "respond")
    .addEdge("respond", END);

describe("GraphRegistry", () => {
  test("an export that is not a graph (a chat model) is refused at validation, naming what it is", async () => {
    const registry = new GraphRegistry({ model: { graph: new ScriptedChatModel({ respond: () => "x" }) as never, description: "x" } });
    await assert.rejects(registry.validateAll(), (error: Error) => {
      assert.ok(error instanceof RegistrationError);
      assert.match(error.message, /model 'model': could not load its graph: .*must be a compiled graph.*ScriptedChatModel.*chat model/u);
      return true;
    });
  });

  test("a streamable node name that is not a node is refused, with a did-you-mean", async () => {
    const registry = new GraphRegistry({ echo: { graph: echoGraph(), description: "x", streamableNodeNames: ["respnd"] } });
    await assert.rejects(registry.validateAll(), (error: Error) => {
      assert.ok(error instanceof RegistrationError);
      assert.equal(error.key, "streamableNodeNames");
      assert.match(error.message, /'respnd' is not a node of the graph; did you mean 'respond'\?/u);
      return true;
    });
    const far = new GraphRegistry({ echo: { graph: echoGraph(), description: "x", streamableNodeNames: ["zzzzzz"] } });
    await assert.rejects(
      far.validateAll(),
      (error: Error) => !error.message.includes("did you mean") && /its nodes: 'respond'/u.test(error.message),
    );
  });

  test("nodes inside a subgraph count as streamable node names", async () => {
    const registry = new GraphRegistry({ nested: { graph: nestedStreamGraph(), description: "x", streamableNodeNames: ["agent", "llm"] } });
    await registry.validateAll();
  });

  test("an empty registry is rejected", () => {
    assert.throws(
      () => new GraphRegistry({}),
      (error: Error) => error instanceof RegistrationError && /empty/.test(error.message),
    );
  });

  test("model IDs must fit in one URL path segment", () => {
    for (const id of ["a/b", "", ".", "..", "has space", "per%cent", "q?x", "frag#x"]) {
      assert.throws(
        () => new GraphRegistry({ [id]: { graph: echoGraph, description: "x" } }),
        RegistrationError,
        `'${id}' should be rejected`,
      );
    }
    const registry = new GraphRegistry({ "gpt-4o:mini@v1.2_~x": { graph: echoGraph, description: "x" } });
    assert.deepEqual(registry.getGraphNames(), ["gpt-4o:mini@v1.2_~x"]);
  });

  test("configuration mistakes name the model and the key", () => {
    assert.throws(
      () => new GraphRegistry({ echo: { graph: echoGraph } as never }),
      (error: Error) => error.message.startsWith("model 'echo': description"),
    );
    assert.throws(
      () => new GraphRegistry({ echo: { graph: echoGraph, description: "x", features: ["TELEPATHY"] as never } }),
      (error: Error) => /model 'echo': features\.0: unknown feature "TELEPATHY"/.test(error.message),
    );
    assert.throws(
      () => new GraphRegistry({ echo: { graph: echoGraph, description: "x", outputToMessage: "nope" as never } }),
      (error: Error) => /model 'echo': outputToMessage: must be a function/.test(error.message),
    );
    assert.throws(
      () => new GraphRegistry({ echo: { graph: echoGraph, description: "x", colour: "red" } as never }),
      (error: Error) => /model 'echo'.*colour/.test(error.message),
    );
  });

  test("getGraph, getGraphNames and register", () => {
    const registry = new GraphRegistry({ echo: { graph: echoGraph, description: "first", features: new Set(["client_events"]) as never } });
    assert.equal(registry.getGraph("echo").description, "first");
    assert.deepEqual([...registry.getGraph("echo").features], ["CLIENT_EVENTS"]);
    assert.throws(() => registry.getGraph("other"), GraphNotFoundError);
    registry.register("other", { graph: echoGraph, description: "second" });
    registry.register("echo", { graph: echoGraph, description: "replaced" });
    assert.deepEqual(registry.getGraphNames(), ["echo", "other"]);
    assert.equal(registry.getGraph("echo").description, "replaced");
    assert.throws(() => registry.register("bad/id", { graph: echoGraph, description: "x" }), RegistrationError);
  });

  test("registered configurations are read-only and the registered callbacks are not copied", () => {
    const callbacks: never[] = [];
    const registry = new GraphRegistry({ echo: { graph: echoGraph, description: "x", runtimeCallbacks: callbacks } });
    const config = registry.getGraph("echo");
    assert.ok(Object.isFrozen(config));
    assert.throws(() => {
      (config as { description: string }).description = "changed";
    }, TypeError);
    assert.equal(config.runtimeCallbacks, callbacks);
  });

  test("sources resolve: compiled graph, StateGraph, sync and async factories; factories run once", async () => {
    let calls = 0;
    const registry = new GraphRegistry({
      compiled: { graph: echoGraph(), description: "x" },
      builder: { graph: builder(), description: "x" },
      sync: {
        graph: () => {
          calls += 1;
          return echoGraph();
        },
        description: "x",
      },
      async: { graph: async () => builder(), description: "x" },
    });
    await registry.validateAll();
    for (const name of registry.getGraphNames()) {
      const graph = await registry.resolveGraph(name);
      assert.equal(typeof graph.invoke, "function", name);
    }
    await registry.resolveGraph("sync");
    assert.equal(calls, 1);
    const output = (await (await registry.resolveGraph("builder")).invoke({ messages: [] })) as { messages: AIMessage[] };
    assert.equal(output.messages.at(-1)?.text, "built");
  });

  test("a source that is not a graph fails validation naming the model; a failed factory is retried", async () => {
    const notGraph = new GraphRegistry({ broken: { graph: () => 42, description: "x" } });
    await assert.rejects(notGraph.validateAll(), (error: Error) => /model 'broken'/.test(error.message));
    let attempts = 0;
    const flaky = new GraphRegistry({
      flaky: {
        graph: async () => {
          attempts += 1;
          if (attempts === 1) throw new Error("not yet");
          return echoGraph();
        },
        description: "x",
      },
    });
    await assert.rejects(flaky.resolveGraph("flaky"), /not yet/);
    await flaky.resolveGraph("flaky");
    assert.equal(attempts, 2);
  });

  test("two models serving one graph: `threads: true` on one makes only that one stateful", async () => {
    const shared = echoGraph();
    const registry = new GraphRegistry({
      remembers: { graph: shared, description: "x", threads: true },
      forgets: { graph: shared, description: "x" },
    });
    assert.equal(await registry.isStateful("remembers"), true);
    assert.equal(await registry.isStateful("forgets"), false);
    assert.equal(shared.checkpointer, undefined, "the graph itself is left without a checkpointer");
    assert.notEqual((await registry.resolveGraph("remembers")).checkpointer, undefined);
  });
});
