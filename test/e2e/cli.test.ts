import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { type RunningServer, runCli, startCli } from "../helpers/cli.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { answerBatch } from "../helpers/resume.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const DEMO_MODELS = ["echo", "plain", "research", "approval", "tools", "think", "memory", "research-deep"];

describe("chat-serve start with the repository's own config", () => {
  let server: RunningServer;
  let client: OpenAI;
  before(async () => {
    server = await startCli([]);
    client = new OpenAI({ baseURL: server.baseURL, apiKey: "not-checked", maxRetries: 0 });
  });
  after(async () => {
    assert.equal(await server.stop("SIGTERM"), 0);
  });

  test("approval pauses with a graph_interrupt call and finishes with the human's answer", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "ship it" }];
    const paused = await client.chat.completions.create({ model: "approval", messages });
    const calls = paused.choices[0]!.message.tool_calls!;
    assert.equal(paused.choices[0]?.finish_reason, "tool_calls");
    const done = await client.chat.completions.create({
      model: "approval",
      messages: answerBatch(messages, calls, '{"resume": "approve"}'),
    });
    assert.equal(done.choices[0]?.message.content, "Approved: going ahead with ship it.");
  });

  test("an upload past the body limit is answered 413 in the path's shape, read by every client, never a reset", async () => {
    // 3 MB to the default 1 MB limit: the server reads and drops the rest, so fetch sees the answer.
    const big = JSON.stringify({ model: "echo", messages: [{ role: "user", content: "x".repeat(3 * 1024 * 1024) }] });
    const origin = new URL(server.baseURL).origin;
    const failures: string[] = [];
    for (let round = 0; round < 20; round += 1) {
      for (const path of ["/v1/chat/completions", "/runs/wait", "/v1/messages"]) {
        try {
          const answer = await fetch(`${origin}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
          const text = await answer.text();
          if (answer.status !== 413) failures.push(`${path}: ${answer.status} ${text.slice(0, 80)}`);
          else if (path === "/v1/messages") assert.match(text, /^\{"type":"error"/u, "Anthropic's shape");
        } catch (error) {
          failures.push(`${path}: ${String((error as { cause?: { code?: string } }).cause?.code ?? error)}`);
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  test("prints the model table and serves every demo model", async () => {
    for (const model of DEMO_MODELS) assert.match(server.output(), new RegExp(`│ ${model}\\s`));
    const ids = (await client.models.list()).data.map((model) => model.id);
    assert.deepEqual(ids, DEMO_MODELS);
  });

  test("chat-serve schema research prints exactly the retrieval descriptor", async () => {
    const printed = await runCli(["schema", "research"]);
    assert.equal(printed.code, 0, printed.stderr);
    const retrieved = (await client.models.retrieve("research")) as unknown as { graph_chat_serve: { client_settings: unknown } };
    assert.deepEqual(JSON.parse(printed.stdout), retrieved.graph_chat_serve.client_settings);
    const none = await runCli(["schema", "echo"]);
    assert.equal(none.code, 1);
    assert.match(none.stderr.trim(), /^error model 'echo' declares no client settings/);
    const unknown = await runCli(["schema", "nope"]);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr.trim(),
      /^error model 'nope' is not in chat-serve\.config\.ts; its models are: echo, plain, research, approval, tools, think, memory, research-deep$/,
    );
  });

  for (const model of DEMO_MODELS) {
    test(`${model}: streamed text equals the complete text`, async () => {
      const messages = [{ role: "user" as const, content: "What is the weather in Oslo?" }];
      const complete = await client.chat.completions.create({ model, messages });
      assertMatchesOpenAI("CreateChatCompletionResponse", complete);
      const stream = await client.chat.completions.create({ model, messages, stream: true });
      let text = "";
      let finishReason: string | null = null;
      for await (const chunk of stream) {
        assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
        text += chunk.choices[0]?.delta.content ?? "";
        finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
      }
      assert.equal(text, complete.choices[0]?.message.content ?? "");
      assert.equal(finishReason, complete.choices[0]?.finish_reason);
      if (model === "tools") assert.equal(finishReason, "tool_calls");
      if (model === "echo") {
        assert.equal(text, "What is the weather in Oslo?");
        assert.ok(complete.usage && complete.usage.total_tokens > 0);
      }
    });
  }
});

describe("chat-serve models", () => {
  test("prints the table, or JSON with --json", async () => {
    const table = await runCli(["models"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /echo.*respond/);
    const json = await runCli(["models", "--json"]);
    assert.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout);
    assert.deepEqual(
      rows.map((row: { id: string }) => row.id),
      DEMO_MODELS,
    );
    assert.deepEqual(rows[0].streamableNodeNames, ["respond"]);
  });

  test("--mermaid prints one model's graph as LangGraph draws it; an unknown model gets a did-you-mean", async () => {
    const diagram = await runCli(["models", "--mermaid", "research"]);
    assert.equal(diagram.code, 0, diagram.stderr);
    assert.match(diagram.stdout, /^%%\{init:.*\n(graph|flowchart) TD;\n/u);
    for (const edge of ["__start__ --> search;", "search --> answer;", "answer --> __end__;"])
      assert.ok(diagram.stdout.includes(`\t${edge}\n`), edge);
    const unknown = await runCli(["models", "--mermaid", "reserch"]);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^error model 'reserch' is not in chat-serve\.config\.ts; did you mean 'research'\?; its models are: echo,/u,
    );
  });
});

describe("config mistakes", () => {
  test("exit 1 with one line naming the file and key, no stack", async () => {
    const { dir, cleanup } = tempProject({
      "chat-serve.config.ts": `export default { graphs: { echo: { graph: "./g.ts:graph" } } };`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    try {
      for (const command of [["models"], ["start", "--port", "0"]]) {
        const result = await runCli(command, { cwd: dir });
        assert.equal(result.code, 1);
        const lines = result.stderr.trim().split("\n");
        assert.equal(lines.length, 1, result.stderr);
        assert.match(lines[0]!, /^error chat-serve\.config\.ts: graphs\.echo\.description: is required/);
        assert.doesNotMatch(result.stderr, /\n\s+at /);
      }
    } finally {
      cleanup();
    }
  });

  test("a settings model that registration refuses is one line naming the model", async () => {
    const { dir, cleanup } = tempProject({
      "chat-serve.config.ts": `
import { z } from "zod";
import { defineClientSettings } from "chat-serve";
const Loose = defineClientSettings(z.object({ depth: z.number().default(1) }));
export default { graphs: { research: { graph: "./g.ts:graph", description: "x", clientSettings: Loose } } };`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    try {
      for (const command of [["models"], ["start", "--port", "0"]]) {
        const result = await runCli(command, { cwd: dir });
        assert.equal(result.code, 1);
        assert.match(
          result.stderr.trim(),
          /^error chat-serve\.config\.ts: graphs\.research\.clientSettings: client settings must be strict/,
        );
        assert.equal(result.stderr.trim().split("\n").length, 1);
      }
    } finally {
      cleanup();
    }
  });

  test("a bad flag or environment value is one clear line", async () => {
    const port = await runCli(["start", "--port", "eighty"]);
    assert.equal(port.code, 1);
    assert.match(port.stderr.trim(), /^error --port must be a whole number/);
    const env = await runCli(["start", "--port", "0"], { env: { SVC_CHAT_API_PREFIX: "v1" } });
    assert.equal(env.code, 1);
    assert.match(env.stderr.trim(), /^error SVC_CHAT_API_PREFIX must start with '\/'/);
  });
});

describe("a graph module that fails to import", () => {
  test("names the module, line and column of a syntax error or of the throw; the stack at debug", async () => {
    const { dir, cleanup } = tempProject({
      "chat-serve.config.ts": `export default { graphs: { broken: { graph: "./graphs/broken.ts:graph", description: "x" } } };`,
      "graphs/broken.ts": "export const graph = {\n  oops: (1 +,\n};\n",
      "throws.config.ts": `export default { graphs: { throws: { graph: "./graphs/throws.ts:graph", description: "x" } } };`,
      "graphs/throws.ts": 'const ready = false;\nif (!ready) throw new Error("the model key is missing");\nexport const graph = {};\n',
    });
    try {
      const syntax = await runCli(["models"], { cwd: dir });
      assert.equal(syntax.code, 1);
      assert.equal(
        syntax.stderr.trim(),
        "error chat-serve.config.ts: graphs.broken.graph: importing './graphs/broken.ts' failed at graphs/broken.ts:2:13: ParseError: Unexpected token",
      );
      const thrown = await runCli(["models", "--config", "throws.config.ts"], { cwd: dir });
      assert.equal(
        thrown.stderr.trim(),
        "error throws.config.ts: graphs.throws.graph: importing './graphs/throws.ts' failed at graphs/throws.ts:2:19: the model key is missing",
      );
      const debug = await runCli(["models", "--config", "throws.config.ts"], { cwd: dir, env: { LOG_LEVEL: "debug" } });
      assert.match(debug.stderr, /^caused by Error: the model key is missing\n\s+at .*graphs\/throws\.ts:2:19/mu);
    } finally {
      cleanup();
    }
  });
});

describe("operator commands", () => {
  test("need no API key: pending, purge-pending and responses run with the keys' variables unset; start still asks", async () => {
    const { dir, cleanup } = tempProject({
      "chat-serve.config.ts": `export default {
  auth: { keys: [{ tenant: "a", key: process.env.CHAT_SERVE_TEST_UNSET_KEY }] },
  graphs: { echo: { graph: "./g.ts:graph", description: "echo" } },
};`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    try {
      const env = { ...process.env };
      delete env.CHAT_SERVE_TEST_UNSET_KEY;
      for (const command of [
        ["pending"],
        ["purge-pending", "--older-than", "7d"],
        ["responses", "list"],
        ["responses", "purge", "--older-than", "7d"],
      ]) {
        const result = await runCli(command, { cwd: dir, env });
        assert.equal(result.code, 0, `${command.join(" ")}: ${result.stderr}`);
        assert.doesNotMatch(result.stderr, /auth\.keys/u);
      }
      const start = await runCli(["start", "--port", "0"], { cwd: dir, env });
      assert.equal(start.code, 1);
      assert.match(start.stderr, /auth\.keys\.0: needs exactly one of key or sha256/u);
    } finally {
      cleanup();
    }
  });
});

describe("flags", () => {
  test("--prefix and --host override the config file", async () => {
    const server = await startCli(["--prefix", "/api/openai/", "--host", "127.0.0.1"]);
    try {
      assert.match(server.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/api\/openai$/);
      const models = (await (await fetch(`${server.baseURL}/models`)).json()) as { data: unknown[] };
      assert.equal(models.data.length, DEMO_MODELS.length);
    } finally {
      assert.equal(await server.stop("SIGTERM"), 0);
    }
  });
});

describe("a port in use", () => {
  test("is one clear line, not a stack", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const result = await runCli(["start", "--port", String(port)]);
      assert.equal(result.code, 1);
      assert.equal(result.stderr.trim(), `error port ${port} on 127.0.0.1 is already in use; pass --port to pick another`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});

describe("graceful shutdown", () => {
  test("SIGTERM lets an open stream finish, then exits 0", async () => {
    const { dir, cleanup } = tempProject({
      "chat-serve.config.ts": `export default { graphs: { slow: { graph: "./slow.ts:graph", description: "slow", streamableNodeNames: ["respond"] } } };`,
      "slow.ts": `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "chat-serve/testing";
const model = new ScriptedChatModel({ respond: () => "one two three four five six seven eight nine ten", chunkDelayMs: 60 });
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
`,
    });
    const server = await startCli([], { cwd: dir });
    try {
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: "slow",
        messages: [{ role: "user", content: "go" }],
        stream: true,
      });
      let text = "";
      let signalled: Promise<number | null> | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        if (signalled === undefined && text.length > 0) signalled = server.stop("SIGTERM");
      }
      assert.equal(text, "one two three four five six seven eight nine ten");
      assert.equal(await signalled, 0);
    } finally {
      await server.stop("SIGKILL");
      cleanup();
    }
  });
});
