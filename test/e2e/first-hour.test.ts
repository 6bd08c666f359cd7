import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, describe, test } from "node:test";
import { runCli, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { freePort } from "../helpers/private-redis.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

function project(extra: Record<string, string> = {}, graphs = `{ echo: { graph: "./graph.ts:graph", description: "Echo" } }`) {
  const created = tempProject({ "chat-serve.config.ts": `export default { graphs: ${graphs} };`, "graph.ts": ECHO_GRAPH_MODULE, ...extra });
  cleanups.push(created.cleanup);
  return created.dir;
}

/** Runs `chat-serve start` with no --port and returns the URL it says it is ready on. */
async function startWithout(dir: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<string> {
  const server = await startCli(args, { cwd: dir, env, ownPort: true });
  await server.stop();
  return server.baseURL;
}

describe("the first hour", () => {
  test("PORT and HOST are honoured; --port beats PORT", async () => {
    const dir = project();
    const [port, other] = [await freePort(), await freePort()];
    assert.equal(await startWithout(dir, { PORT: String(port), HOST: "127.0.0.1" }), `http://127.0.0.1:${port}/v1`);
    assert.equal(await startWithout(dir, { PORT: String(port) }, ["--port", String(other)]), `http://127.0.0.1:${other}/v1`);
  });

  test("the playground is on by default on a loopback host only; server.playground decides either way", async () => {
    let output = "";
    const status = async (dir: string, args: string[]) => {
      const server = await startCli(args, { cwd: dir });
      try {
        const { port } = new URL(server.baseURL);
        // The banner's last line (the curl to paste) says it is all printed.
        await eventually(async () => assert.match(server.output(), /^ {2}try +curl/mu), 5_000, 20);
        const playgroundLine = /^ {2}playground +http/mu.test(server.output());
        output = server.output();
        return { status: (await fetch(`http://127.0.0.1:${port}/v1/playground`)).status, playgroundLine };
      } finally {
        await server.stop();
      }
    };
    const plain = project();
    assert.deepEqual(await status(plain, []), { status: 200, playgroundLine: true });
    assert.doesNotMatch(output, /warning/u);
    assert.deepEqual(await status(plain, ["--host", "0.0.0.0"]), { status: 404, playgroundLine: false });
    // On a network address the banner says the playground is off and how to turn it on, and
    // warns that without keys anyone who reaches it can run the models.
    assert.match(output, /^ {2}playground +off on a network address \(server\.playground: true turns it on\)$/mu);
    assert.match(output, /^warning no API keys: anyone who can reach 0\.0\.0\.0 can run the models/mu);
    const on = project({
      "chat-serve.config.ts": `export default { server: { playground: true }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
    });
    assert.deepEqual(await status(on, ["--host", "0.0.0.0"]), { status: 200, playgroundLine: true });
    const off = project({
      "chat-serve.config.ts": `export default { server: { playground: false }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
    });
    assert.deepEqual(await status(off, []), { status: 404, playgroundLine: false });
  });

  test(".env in the working directory is read; the environment wins over it", async () => {
    const [fromFile, fromEnv] = [await freePort(), await freePort()];
    const dir = project({ ".env": `PORT=${fromFile}\nSVC_CHAT_API_PREFIX=/api\n` });
    assert.equal(await startWithout(dir, {}), `http://127.0.0.1:${fromFile}/api`);
    assert.equal(await startWithout(dir, { PORT: String(fromEnv) }), `http://127.0.0.1:${fromEnv}/api`);
  });

  test("a LOG_LEVEL or --log-level that is not a level is one line, not a crash", async () => {
    const dir = project();
    const loud = await runCli(["start", "--port", "0"], { cwd: dir, env: { LOG_LEVEL: "loud" } });
    assert.equal(loud.code, 1);
    assert.equal(loud.stderr.trim(), "error LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')");
    const flag = await runCli(["start", "--port", "0", "--log-level", "chatty"], { cwd: dir });
    assert.match(flag.stderr, /^error --log-level must be one of .* \(got 'chatty'\)$/mu);
    assert.doesNotMatch(flag.stderr, /crashed/u);
  });

  test("a backend that cannot be reached is named, with its URL and config key", async () => {
    const port = await freePort();
    const redis = project(
      {},
      `{ echo: { graph: "./graph.ts:graph", description: "Echo" } }, coordinator: { kind: "redis", url: "redis://127.0.0.1:${port}" }`,
    );
    const refused = await runCli(["start", "--port", "0"], { cwd: redis });
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr.trim(),
      `error cannot reach the Redis coordinator at redis://127.0.0.1:${port} (chat-serve.config.ts: coordinator.url): no connection: nothing answers at that address (is the service running, and is the port right?)`,
    );
    const userless = project(
      {},
      `{ echo: { graph: "./graph.ts:graph", description: "Echo" } }, checkpointer: { kind: "postgres", url: "postgres://:secret@127.0.0.1:5432/test" }`,
    );
    const noUser = await runCli(["start", "--port", "0"], { cwd: userless, env: { USER: "", PGUSER: "" } });
    assert.equal(noUser.code, 1);
    assert.match(
      noUser.stderr.trim(),
      /^error cannot reach the Postgres checkpointer at postgres:\/\/:\*\*\*@127\.0\.0\.1:5432\/test \(chat-serve\.config\.ts: checkpointer\.url\): .*user/u,
    );
    assert.ok(!noUser.stderr.includes("secret"), "no password in the output");
  });

  test("one log line per request, with method, path, status, model, duration and request id; --quiet turns it off", async () => {
    const dir = project();
    const server = await startCli([], { cwd: dir, env: { LOG_LEVEL: "info", LOG_FORMAT: "json" } });
    try {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "req-for-the-log" },
        body: JSON.stringify({ model: "echo", messages: [{ role: "user", content: "hi" }] }),
      });
      assert.equal(response.status, 200);
      await fetch(`${server.baseURL}/nowhere`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const lines = server
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const chat = lines.find((line) => line.requestId === "req-for-the-log");
      assert.ok(chat, server.output());
      assert.equal(chat.method, "POST");
      assert.equal(chat.path, "/v1/chat/completions");
      assert.equal(chat.status, 200);
      assert.equal(chat.model, "echo");
      assert.equal(typeof chat.durationMs, "number");
      assert.ok(
        lines.some((line) => line.path === "/v1/nowhere" && line.status === 404),
        "404s are logged too",
      );
      assert.ok(!server.output().includes("Server listening"), "the banner alone says where it listens");
    } finally {
      await server.stop();
    }
    const quiet = await startCli(["--quiet"], { cwd: dir, env: { LOG_LEVEL: "info", LOG_FORMAT: "json" } });
    try {
      await fetch(`${quiet.baseURL}/models`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(!quiet.output().includes('"path":"/v1/models"'), quiet.output());
    } finally {
      await quiet.stop();
    }
  });

  test("NO_COLOR turns colour off, even with FORCE_COLOR set", async () => {
    const dir = project();
    const colored = await runCli(["models"], { cwd: dir, env: { FORCE_COLOR: "1", NO_COLOR: "" } });
    assert.ok(colored.stdout.includes("\u001b["), "FORCE_COLOR alone colours (so this test can fail)");
    const plain = await runCli(["models"], { cwd: dir, env: { FORCE_COLOR: "1", NO_COLOR: "1" } });
    assert.equal(plain.code, 0);
    assert.ok(!plain.stdout.includes("\u001b["), plain.stdout);
  });

  test("the banner prints the version, the playground and docs URLs and a curl that works as pasted", async () => {
    const dir = project();
    const server = await startCli([], { cwd: dir, env: { SVC_CHAT_API_DOCS_ENABLED: "true" } });
    try {
      await eventually(async () => assert.match(server.output(), /^ {2}try +curl/mu), 5_000, 20);
      const output = server.output();
      assert.match(output, /version +chat-serve \d+\.\d+\.\d+/u);
      const docs = /docs +(http:\/\/\S+)/u.exec(output)?.[1];
      assert.equal(docs, `${server.baseURL}/docs`);
      assert.equal((await fetch(docs!)).status, 200);
      // On by default on a loopback host.
      const playground = /playground +(http:\/\/\S+)/u.exec(output)?.[1];
      assert.equal(playground, `${server.baseURL}/playground`);
      const page = await fetch(playground!);
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'self'/u);
      const curl = /try +(curl .+)$/mu.exec(output)?.[1];
      assert.ok(curl, output);
      const child = spawn("sh", ["-c", curl]);
      let answer = "";
      child.stdout.on("data", (data: Buffer) => (answer += data.toString()));
      await once(child, "exit");
      assert.equal(JSON.parse(answer).choices[0].message.content, "echo: hello");
    } finally {
      await server.stop();
    }
  });

  test("--help lists the environment variables", async () => {
    const help = await runCli(["--help"]);
    for (const name of ["PORT, HOST", "LOG_LEVEL", "SVC_CHAT_API_PREFIX", "SVC_ENABLE_TRACING", ".env"])
      assert.ok(help.stdout.includes(name), name);
  });

  test("a streamableNodeNames typo stops `models` with one line and a did-you-mean", async () => {
    const dir = project({}, `{ echo: { graph: "./graph.ts:graph", description: "Echo", streamableNodeNames: ["respnd"] } }`);
    const result = await runCli(["models"], { cwd: dir });
    assert.equal(result.code, 1);
    assert.match(
      result.stderr.trim(),
      /^error chat-serve\.config\.ts: graphs\.echo\.streamableNodeNames: 'respnd' is not a node of the graph; did you mean 'respond'\?/u,
    );
  });

  test("an export that is not a graph stops `models` with one line", async () => {
    const model = `import { ScriptedChatModel } from "chat-serve/testing";\nexport const model = new ScriptedChatModel({ respond: () => "x" });\n`;
    const dir = project({ "model.ts": model }, `{ m: { graph: "./model.ts:model", description: "A model, not a graph" } }`);
    const result = await runCli(["models"], { cwd: dir });
    assert.equal(result.code, 1);
    assert.match(
      result.stderr.trim(),
      /^error chat-serve\.config\.ts: graphs\.m: could not load its graph: .*ScriptedChatModel.*chat model/u,
    );
    assert.equal(result.stderr.trim().split("\n").length, 1);
  });
});
