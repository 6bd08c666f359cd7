import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import OpenAI from "openai";
import { REPO_ROOT, runCli, startCli } from "../helpers/cli.js";
import { tempProject } from "../helpers/temp-project.js";

const run = promisify(execFile);
/** A LangGraph.js project as `langgraph dev` serves it: langgraph.json, an env file, one graph with a checkpointer. */
const FIXTURE = fileURLToPath(new URL("../fixtures/langgraph-project/", import.meta.url));
const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

describe("a LangGraph project's langgraph.json", () => {
  test("is served by `chat-serve start` with no other file: each graph a model, its env applied, the stateful one keeping its thread", async () => {
    const server = await startCli([], { cwd: FIXTURE, env: { AGENT_GREETING: "" } });
    try {
      assert.match(server.output(), /config langgraph\.json/u);
      assert.match(
        server.output(),
        /langgraph read 2 graphs, env from \.env \(1 variable; those already set keep their value\) from langgraph\.json; ignored: node_version, dependencies\. .*chat-serve init --from langgraph\.json/u,
      );
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: "not-needed" });
      const models = await client.models.list();
      const described = Object.fromEntries(
        models.data.map((model) => [
          model.id,
          (model as unknown as { graph_chat_serve: { description: string } }).graph_chat_serve.description,
        ]),
      );
      // From the compiled graph (`compile({ description })`), and from langgraph.json's entry.
      assert.deepEqual(described, {
        agent: "Greets you and repeats what you said.",
        notes: "Remembers what you told it earlier in the conversation.",
      });
      const completion = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "hi" }] });
      // AGENT_GREETING was set empty in the environment: the environment wins over the env file.
      assert.equal(completion.choices[0]?.message.content, "! You said: hi");

      const first = await client.responses.create({ model: "notes", input: "one" });
      assert.equal(first.output_text, "You have told me: one");
      const second = await client.responses.create({ model: "notes", input: "two", previous_response_id: first.id });
      assert.equal(second.output_text, "You have told me: one, two");
    } finally {
      await server.stop();
    }
  });

  test("the env file fills what the environment leaves unset", async () => {
    const server = await startCli([], { cwd: FIXTURE, env: { AGENT_GREETING: undefined } });
    try {
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: "not-needed" });
      const completion = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "hi" }] });
      assert.equal(completion.choices[0]?.message.content, "Ahoy! You said: hi");
    } finally {
      await server.stop();
    }
  });

  test("`chat-serve models` lists its graphs, the note on stderr so --json stays JSON", async () => {
    const models = await runCli(["models", "--json"], { cwd: FIXTURE });
    assert.equal(models.code, 0, models.stderr);
    assert.deepEqual(
      JSON.parse(models.stdout).map((row: { id: string; features: string[] }) => [row.id, row.features]),
      [
        // As `langgraph dev` serves them: custom events and interrupts on (see docs/configuration.md).
        ["agent", ["client_events", "interrupts"]],
        ["notes", ["client_events", "interrupts", "threads"]],
      ],
    );
    assert.match(models.stderr, /langgraph read 2 graphs/u);
  });

  test("a chat-serve config names its graphs by id (`./langgraph.json:agent`), with a did-you-mean for a wrong one", async () => {
    const fixture = path.relative(path.join(REPO_ROOT, "test/.tmp/x"), FIXTURE).split(path.sep).join("/");
    const config = (id: string) => `export default {
  graphs: { greeter: { graph: "${fixture}/langgraph.json:${id}", description: "The agent, by id" } },
};
`;
    const good = tempProject({ "chat-serve.config.ts": config("agent") });
    const bad = tempProject({ "chat-serve.config.ts": config("agnet") });
    cleanups.push(good.cleanup, bad.cleanup);
    const models = await runCli(["models", "--json"], { cwd: good.dir });
    assert.equal(models.code, 0, models.stderr);
    assert.deepEqual(
      JSON.parse(models.stdout).map((row: { id: string }) => row.id),
      ["greeter"],
    );
    const wrong = await runCli(["models"], { cwd: bad.dir });
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr.trim(),
      /^error chat-serve\.config\.ts: graphs\.greeter\.graph: .*langgraph\.json lists no graph 'agnet'; did you mean 'agent'\? \(it lists: agent, notes\)$/u,
    );
  });

  test("a langgraph.json mistake is one line naming the file and the key", async () => {
    const noGraphs = tempProject({ "langgraph.json": JSON.stringify({ dependencies: ["."] }) });
    const missingEnv = tempProject({ "langgraph.json": JSON.stringify({ graphs: { a: "./a.ts:graph" }, env: ".env.missing" }) });
    cleanups.push(noGraphs.cleanup, missingEnv.cleanup);
    const first = await runCli(["models"], { cwd: noGraphs.dir });
    assert.equal(first.code, 1);
    assert.equal(first.stderr.trim(), "error langgraph.json: graphs: is required: an object of graph id → './file.ts:export'");
    const second = await runCli(["models"], { cwd: missingEnv.dir });
    assert.equal(second.code, 1);
    assert.match(second.stderr.trim(), /^error langgraph\.json: env: cannot find the env file '\.env\.missing' \(looked for .*\)$/u);
  });

  test("`init --from langgraph.json` writes a config whose project installs, passes its own test and serves", {
    timeout: 300_000,
  }, async () => {
    const root = mkdtempSync(path.join(tmpdir(), "chat-serve-langgraph-"));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const project = path.join(root, "my-graphs");
    cpSync(FIXTURE, project, { recursive: true });
    const init = await runCli(["init", "--from", "langgraph.json"], { cwd: project });
    assert.equal(init.code, 0, init.stderr);
    assert.match(
      init.stdout,
      /configured the LangGraph project in \. for chat-serve\n {2}chat-serve\.config\.ts\n {2}package\.json \(added to\)\n/u,
    );
    const config = readFileSync(path.join(project, "chat-serve.config.ts"), "utf8");
    assert.match(config, /agent: \{\n {6}graph: "\.\/src\/agent\.ts:graph",/u);
    assert.match(config, /description: "Remembers what you told it earlier in the conversation\."/u);
    const manifest = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8"));
    // No absolute path of this machine: the checkout, relative to the project.
    assert.equal(manifest.dependencies["chat-serve"], `file:${path.relative(project, REPO_ROOT)}`);
    assert.doesNotMatch(readFileSync(path.join(project, "package.json"), "utf8"), /"file:\//u);
    assert.match(config, /streamableNodeNames: "auto",\n {6}features: \["CLIENT_EVENTS", "INTERRUPTS"\],\n {6}events: \{ tools: true \},/u);
    assert.equal(manifest.scripts.serve, "chat-serve start");
    // Run again, it refuses to write over the config it wrote.
    const again = await runCli(["init", "--from", "langgraph.json"], { cwd: project });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /chat-serve\.config\.ts already exists; pass --force to write over it/u);

    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, timeout: 240_000 });
    const { NODE_TEST_CONTEXT: _inner, ...env } = process.env;
    const projectTest = await run("npm", ["test"], { cwd: project, env }).catch((error: { stdout: string; stderr: string }) => error);
    assert.match(projectTest.stdout, /# pass 2\n# fail 0/u, projectTest.stderr);

    const server = await startCli([], { cwd: project, bin: path.join(project, "node_modules/chat-serve/bin/chat-serve.js") });
    try {
      assert.match(server.output(), /config chat-serve\.config\.ts/u);
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: "not-needed" });
      const completion = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "hi" }] });
      assert.match(completion.choices[0]?.message.content ?? "", /You said: hi$/u);
    } finally {
      await server.stop();
    }
  });
});
