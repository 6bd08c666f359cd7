import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { codingAgentGraphs, freshHome, realClient, runClient } from "../helpers/real-clients.js";
import { tempProject } from "../helpers/temp-project.js";

// Claude Code itself (the npm package, pinned in test/clients), run headless as its users run
// it, against `chat-serve start`: `claude -p … --output-format stream-json --verbose` with
// ANTHROPIC_BASE_URL at the server, a dummy token and a fresh HOME. Its first request once
// ended in a 400 (a `system` turn inside `messages`).

const { bin, skip } = realClient("claude");
let server: RunningServer;
let home: ReturnType<typeof freshHome>;
let project: ReturnType<typeof tempProject>;

before(async () => {
  if (skip) return;
  project = tempProject({
    // A file of about 20,000 tokens: Claude Code counts a file that size before it reads it.
    "notes.txt": `${`${"lorem ipsum dolor sit amet ".repeat(20)}\n`.repeat(160)}the last line of the notes\n`,
    "chat-serve.config.ts": `export default {
  server: { anthropic: true },
  graphs: ${codingAgentGraphs()},
};`,
  });
  server = await startCli([], { cwd: project.dir, env: { LOG_LEVEL: "info" } });
  home = freshHome();
});
after(async () => {
  if (skip) return;
  await server.stop();
  home.cleanup();
  project.cleanup();
});

/** One `claude -p` run: its stream-json events, and the final result event. */
async function claude(prompt: string, extra: string[] = []) {
  const { origin } = new URL(server.baseURL);
  const env = {
    PATH: process.env.PATH,
    HOME: home.dir,
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_AUTH_TOKEN: "a-dummy-token",
    ANTHROPIC_API_KEY: "",
    ANTHROPIC_MODEL: "coder",
    ANTHROPIC_DEFAULT_HAIKU_MODEL: "coder",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  const run = await runClient(bin, ["-p", prompt, "--output-format", "stream-json", "--verbose", ...extra], { env, cwd: project.dir });
  const events = run.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, any>);
  const result = events.find((event) => event.type === "result");
  assert.ok(result !== undefined, `no result event (exit ${run.code}):\n$run.stdout.slice(-1500)\n$run.stderr.slice(-1500)`);
  return { events, result, run };
}

describe("Claude Code against chat-serve", { skip, timeout: 180_000 }, () => {
  test("a plain answer", async () => {
    const { result, run } = await claude("hello from Claude Code");
    assert.equal(result.is_error, false, JSON.stringify(result).slice(0, 800));
    assert.equal(result.result, "You said: hello from Claude Code");
    assert.equal(run.code, 0);
  });

  test("a tool round trip: the graph calls Claude Code's Bash, Claude Code runs it, the graph reads its output", async () => {
    const { events, result } = await claude("please run `echo chat-serve-was-here`", ["--allowedTools", "Bash"]);
    assert.equal(result.is_error, false, JSON.stringify(result).slice(0, 800));
    const toolUses = events.flatMap((event) =>
      event.type === "assistant"
        ? (event.message.content as { type: string; name?: string }[]).filter((block) => block.type === "tool_use")
        : [],
    );
    assert.deepEqual(
      toolUses.map((block) => block.name),
      ["Bash"],
    );
    assert.equal(result.result, "The command said: chat-serve-was-here");
  });

  test("tool calls in two consecutive turns of one session", async () => {
    const first = await claude("please run `echo one`", ["--allowedTools", "Bash"]);
    assert.equal(first.result.result, "The command said: one");
    const second = await claude("please run `echo two`", ["--allowedTools", "Bash", "--continue"]);
    assert.equal(second.result.is_error, false, JSON.stringify(second.result).slice(0, 800));
    assert.equal(second.result.result, "The command said: two");
    assert.ok(second.result.num_turns <= 3, `turns: $second.result.num_turns`);
  });

  test("an interrupt: the question is the answer's text, and the next prompt (--continue) answers it", async () => {
    const asked = await claude("ship the release", ["--model", "approval"]);
    assert.equal(asked.result.is_error, false, JSON.stringify(asked.result).slice(0, 800));
    assert.match(asked.result.result, /^May I go ahead with: [\s\S]*ship the release\? \(approve \/ reject\)\n\n`graph_interrupt:/u);
    const answered = await claude("approve", ["--model", "approval", "--continue"]);
    assert.match(answered.result.result, /^Approved: going ahead with [\s\S]*ship the release\.$/u);
  });

  test("a long answer streamed word by word arrives whole", async () => {
    const words = Array.from({ length: 1_500 }, (_unused, index) => `word${index}`).join(" ");
    const { result } = await claude(words, ["--model", "recaller"]);
    assert.equal(result.is_error, false, JSON.stringify(result).slice(0, 800));
    assert.equal(result.result, `You said: ${words}`);
  });

  test("a graph that reasons: Claude Code shows its thinking block, then the answer", async () => {
    const { events, result } = await claude("why is the sky blue", ["--model", "think"]);
    const blocks = events.flatMap((event) =>
      event.type === "assistant" ? (event.message.content as { type: string; thinking?: string }[]) : [],
    );
    const thinking = blocks.find((block) => block.type === "thinking");
    assert.match(thinking?.thinking ?? "", /^The user asked something/u, JSON.stringify(blocks).slice(0, 800));
    assert.match(result.result, /^I thought about/u);
  });

  test("token counting: Claude Code counts a large file with count_tokens before its Read goes on", async () => {
    const before = (server.output().match(/POST \/v1\/messages\/count_tokens\?beta=true 200/gu) ?? []).length;
    const { result } = await claude(`please read \`${project.dir}/notes.txt\``, ["--allowedTools", "Read"]);
    assert.equal(result.is_error, false, JSON.stringify(result).slice(0, 800));
    assert.match(result.result, /^The command said: [\s\S]*the last line of the notes/u);
    const after = (server.output().match(/POST \/v1\/messages\/count_tokens\?beta=true 200/gu) ?? []).length;
    assert.ok(after > before, "Claude Code called count_tokens");
  });
});
