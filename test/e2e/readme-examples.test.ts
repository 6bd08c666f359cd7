import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { REPO_ROOT, type RunningServer, startCli } from "../helpers/cli.js";

// The docs' marked examples (the README and docs/*.md), run as they are written against
// `chat-serve start` with the repository's demo config: only the base URL is changed to the
// test server's.
const PAGES = ["README.md", ...readdirSync(path.join(REPO_ROOT, "docs")).map((name) => `docs/${name}`)];
const DOCS = PAGES.map((page) => readFileSync(path.join(REPO_ROOT, page), "utf8")).join("\n");

function example(name: string): string {
  const marker = `<!-- readme-test: ${name} -->`;
  const start = DOCS.indexOf(marker);
  assert.ok(start >= 0, `the docs have the example '${name}'`);
  const match = /```ts\n([\s\S]*?)```/u.exec(DOCS.slice(start));
  assert.ok(match?.[1], `a ts block follows the marker '${name}'`);
  return match[1];
}

let server: RunningServer;
before(async () => {
  server = await startCli([]);
});
after(async () => {
  await server.stop();
});

async function runExample(name: string): Promise<string> {
  // Inside the repository, so its imports resolve to this checkout's packages.
  const file = path.join(REPO_ROOT, `.readme-example-${name}.mts`);
  const origin = new URL(server.baseURL).origin;
  writeFileSync(file, example(name).replaceAll("http://127.0.0.1:8000/v1", server.baseURL).replaceAll("http://127.0.0.1:8000", origin));
  try {
    const child = spawn(process.execPath, ["--import", "tsx", file], { cwd: REPO_ROOT });
    let output = "";
    child.stdout.on("data", (data: Buffer) => (output += data.toString()));
    child.stderr.on("data", (data: Buffer) => (output += data.toString()));
    const [code] = (await once(child, "exit")) as [number | null];
    assert.equal(code, 0, output);
    return output;
  } finally {
    rmSync(file, { force: true });
  }
}

test("README: the quick start's chat completions, complete and streamed, with the openai SDK", async () => {
  const output = await runExample("quick-start");
  assert.match(output, /^hello there \{/mu, "the complete answer and its usage");
  assert.match(output, /total_tokens/u);
  assert.match(output, /\nhello there$/u, "the streamed answer");
});

test("docs/interrupts.md: a paused run answered with a graph_interrupt tool message", async () => {
  const output = await runExample("interrupts-openai");
  assert.match(output, /^tool_calls \{.*"question":"May I go ahead with: ship the release\?".*\}$/mu);
  assert.match(output, /^Approved: going ahead with ship the release\.$/mu);
});

test("docs/client-settings.md: settings sent in metadata reach the graph", async () => {
  const output = await runExample("client-settings");
  assert.match(output, /^I looked at 4 sources about Why is the sky blue and explain it simply enough for a child\.$/mu);
});

test("README: the Responses API with the openai SDK", async () => {
  const output = await runExample("responses-openai");
  assert.match(output, /^hello there \{/mu, "the answer and its usage");
  assert.match(output, /input_tokens/u);
  assert.match(output, /hello again/u);
  assert.match(output, /Approved: going ahead with deploy\./u);
});

test("README: the Responses API with the OpenAI Agents SDK", async () => {
  const output = await runExample("responses-agents");
  assert.match(output, /^hello agents$/mu);
  assert.match(output, /^Approved: going ahead with deploy\.$/mu);
});

test("README: conversations and memory with the openai SDK", async () => {
  const output = await runExample("conversations-openai");
  assert.match(output, /^You said "I like tea"\. Before that you said: "my name is Ada"\.$/mu);
  assert.match(output, /^completed$/mu);
  assert.match(output, /^1$/mu);
  assert.match(output, /^You said "what did I say\?"\. Before that you said: "hello", "\(a note added by the app\)"\.$/mu);
  assert.match(output, /^message\nmessage\nmessage\nmessage\nmessage$/mu, "hello, its answer, the note, the question, its answer");
  assert.match(output, /^You said "two"\. Before that you said: "one"\.$/mu);
});

test("README: a three-turn Agents SDK session, by previousResponseId and by conversationId", async () => {
  const output = await runExample("conversations-agents");
  assert.match(output, /^You said "what is my name\?"\. Before that you said: "my name is Ada", "I like tea"\.$/mu);
  assert.match(output, /^You said "three"\. Before that you said: "one", "two"\.$/mu);
});

test("README: background runs, polled, reattached and cancelled", async () => {
  const output = await runExample("background");
  assert.match(output, /^completed in the background$/mu);
  assert.match(output, /^reattached: one two three four$/mu);
  assert.match(output, /^cancelled$/mu);
});

test("README: the A2A SDK's client streams the research agent's statuses, progress, artifacts and answer", async () => {
  const output = await runExample("a2a-sdk");
  assert.match(output, /^task: [0-9a-f-]{36}\n/u, "the task first");
  assert.match(output, /^status: TASK_STATE_WORKING Searching/mu, "a status line while working");
  assert.match(output, /^status: TASK_STATE_WORKING Read source 2 \(2\/2\)$/mu, "progress");
  assert.match(output, /^artifact: answer "I "$/mu, "the answer's first chunk");
  assert.match(output, /^artifact: sources "https:\/\/example\.com/mu, "the sources");
  assert.match(output, /status: TASK_STATE_COMPLETED \n$/u, "completed last");
});

test("docs/langgraph.md: the LangGraph SDK streams tokens, remembers a second turn, and answers an interrupt", async () => {
  const output = await runExample("langgraph-sdk");
  assert.equal(
    output,
    [
      'You said "apples". This is the start of our conversation.',
      'You said "pears". Before that you said: "apples".',
      "May I go ahead with: deploy? interrupted",
      "Approved: going ahead with deploy.",
      "",
    ].join("\n"),
  );
});

test("docs/mcp.md: the SDK's MCP client lists the tools, gets progress, and answers an elicitation", async () => {
  const output = await runExample("mcp-sdk");
  assert.match(output, /^echo, plain, research, approval, tools, think, memory, research-deep, resume$/mu);
  assert.match(output, /^progress: Read source 2 \(2\/2\)$/mu);
  assert.match(output, /I looked at 2 sources about Why do cats purr/u);
  assert.match(output, /^asked: May I go ahead with: deploy\?$/mu);
  assert.match(output, /Approved: going ahead with deploy\./u);
});
