import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager } from "@langchain/core/callbacks/manager";
import OpenAI from "openai";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { ChatServe } from "../../src/app/chat-serve.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { echoGraph } from "../fixtures/graphs.js";
import { runCli } from "../helpers/cli.js";
import { type ReceivedRequest, startReceiver } from "../helpers/loopback-receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

class CountingHandler extends BaseCallbackHandler {
  name = "counting";
  override awaitHandlers = true;
  chainStarts = 0;
  llmEnds = 0;
  override handleChainStart(): void {
    this.chainStarts += 1;
  }
  override handleLLMEnd(): void {
    this.llmEnds += 1;
  }
}

interface Span {
  name: string;
  attributes: { key: string; value: { stringValue?: string; boolValue?: boolean } }[];
}

function spansOf(requests: ReceivedRequest[]): Span[] {
  return requests.flatMap((request) =>
    (JSON.parse(request.body).resourceSpans as { scopeSpans: { spans: Span[] }[] }[]).flatMap((resource) =>
      resource.scopeSpans.flatMap((scope) => scope.spans),
    ),
  );
}

const attribute = (span: Span, key: string) => span.attributes.find((item) => item.key === key)?.value.stringValue;

describe("Langfuse tracing against a loopback receiver", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: TestServer;
  let client: OpenAI;
  const listHandler = new CountingHandler();
  const registeredList = [listHandler];
  const managerHandler = new CountingHandler();
  const registeredManager = new CallbackManager();
  registeredManager.addHandler(managerHandler);

  before(async () => {
    receiver = await startReceiver();
    server = await startTestServer(
      {
        echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"], runtimeCallbacks: registeredList },
        managed: { graph: echoGraph, description: "Echo with a manager", runtimeCallbacks: registeredManager },
        bare: { graph: echoGraph, description: "Echo without callbacks" },
        approval: {
          graph: approvalGraph,
          description: "Interrupts",
          features: ["INTERRUPTS"],
          runCoordinator: new InMemoryRunCoordinator(),
        },
      },
      { tracing: { publicKey: "pk-lf-test", secretKey: "sk-lf-test", baseUrl: receiver.url } },
    );
    client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test("the trace arrives with the run name, the metadata and the session ID; the graph's callbacks still fire", async () => {
    const completion = await client.chat.completions.create(
      { model: "echo", messages: [{ role: "user", content: "trace me" }], metadata: { session_id: "session-42" } },
      { headers: { "x-request-id": "req-trace-1" } },
    );
    assert.equal(completion.choices[0]?.message.content, "trace me");
    await server.serve.tracing!.flush();

    const exports = receiver.requests.filter((request) => request.url === "/api/public/otel/v1/traces");
    assert.ok(exports.length > 0, "spans were exported to {TRACING_BASE_URL}/api/public/otel/v1/traces");
    assert.equal(exports[0]!.headers.authorization, `Basic ${Buffer.from("pk-lf-test:sk-lf-test").toString("base64")}`);
    const spans = spansOf(exports);
    const root = spans.find((span) => span.name === "svc.chat_completion");
    assert.ok(root, `a root span named svc.chat_completion among ${spans.map((span) => span.name).join(", ")}`);
    assert.equal(attribute(root, "session.id"), "session-42");
    assert.equal(attribute(root, "langfuse.observation.metadata.svc.request_id"), "req-trace-1");
    assert.equal(attribute(root, "langfuse.observation.metadata.svc.model"), "echo");
    assert.equal(attribute(root, "langfuse.observation.metadata.tracing_session_id"), "session-42");
    assert.equal(attribute(root, "langfuse.observation.metadata.langfuse_session_id"), "session-42");
    assert.ok(
      spans.some((span) => attribute(span, "langfuse.observation.type") === "generation"),
      "the model call is a generation",
    );

    const tracing = server.serve.tracing!;
    assert.equal(await tracing.handler(), await tracing.handler(), "one handler, reused by every run");
    assert.ok(listHandler.chainStarts > 0 && listHandler.llmEnds === 1, "the graph's own list callbacks fired");
    assert.deepEqual(registeredList, [listHandler], "the registered list was not mutated");
  });

  test("a callback manager and a graph without callbacks are traced too, without mutating the manager", async () => {
    receiver.requests.length = 0;
    await client.chat.completions.create({ model: "managed", messages: [{ role: "user", content: "one" }] });
    await client.chat.completions.create({ model: "bare", messages: [{ role: "user", content: "two" }], stream: true });
    await server.serve.tracing!.flush();
    const roots = spansOf(receiver.requests).filter((span) => span.name === "svc.chat_completion");
    assert.deepEqual(roots.map((span) => attribute(span, "langfuse.observation.metadata.svc.model")).sort(), ["bare", "managed"]);
    assert.equal(managerHandler.llmEnds, 1);
    assert.deepEqual(registeredManager.handlers, [managerHandler]);
  });

  test("an interrupt run's trace carries its operation ID", async () => {
    receiver.requests.length = 0;
    const paused = await client.chat.completions.create({ model: "approval", messages: [{ role: "user", content: "go" }] });
    const call = paused.choices[0]!.message.tool_calls![0] as { function: { arguments: string } };
    const runId = JSON.parse(call.function.arguments).run_id as string;
    await server.serve.tracing!.flush();
    const root = spansOf(receiver.requests).find((span) => span.name === "svc.chat_completion");
    assert.ok(root);
    assert.equal(attribute(root, "langfuse.observation.metadata.svc.operation_id"), runId);
  });
});

describe("tracing settings", () => {
  test("without tracing, runs carry no run name or tracing metadata unless the graph has callbacks", async () => {
    let runName: string | undefined;
    class RunNameHandler extends BaseCallbackHandler {
      name = "run-name";
      override awaitHandlers = true;
      override handleChainStart(...args: Parameters<NonNullable<BaseCallbackHandler["handleChainStart"]>>): void {
        const [, , , parentRunId, , , , name] = args;
        if (parentRunId === undefined) runName = name;
      }
    }
    const handler = new RunNameHandler();
    const server = await startTestServer(
      { echo: { graph: echoGraph, description: "Echo", runtimeCallbacks: [handler] } },
      { tracing: false },
    );
    try {
      await new OpenAI({ baseURL: server.baseURL, apiKey: "x" }).chat.completions.create({
        model: "echo",
        messages: [{ role: "user", content: "hi" }],
      });
      assert.equal(runName, "svc.chat_completion");
      assert.equal(server.serve.tracing, undefined);
    } finally {
      await server.close();
    }
  });

  test("SVC_ENABLE_TRACING without both keys is refused with one clear line", async () => {
    const registry = new GraphRegistry({ echo: { graph: echoGraph, description: "Echo" } });
    process.env.SVC_ENABLE_TRACING = "true";
    process.env.TRACING_PUBLIC_KEY = "pk";
    try {
      await assert.rejects(new ChatServe({ graphs: registry }).bind(), /SVC_ENABLE_TRACING is true but TRACING_SECRET_KEY is not set/);
    } finally {
      delete process.env.SVC_ENABLE_TRACING;
      delete process.env.TRACING_PUBLIC_KEY;
    }
    const result = await runCli(["start", "--port", "0"], { env: { SVC_ENABLE_TRACING: "true" } });
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      "error SVC_ENABLE_TRACING is true but TRACING_PUBLIC_KEY and TRACING_SECRET_KEY are not set; set them or turn tracing off",
    );
  });
});
