import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { codingAgentGraphs, freshHome, realClient, runClient } from "../helpers/real-clients.js";
import { tempProject } from "../helpers/temp-project.js";

// Codex itself (the npm package, pinned in test/clients), run headless as its users run it
// (`codex exec --json`), against `chat-serve start` as a custom provider with
// `wire_api = "responses"`, over HTTP and over the WebSocket mode. Its first request once got
// a 400 (`tools.4.type`: its namespace and web_search tools), then one for `client_metadata`.

const { bin, skip } = realClient("codex");
let server: RunningServer;
let project: ReturnType<typeof tempProject>;
const homes: ReturnType<typeof freshHome>[] = [];

before(async () => {
  if (skip) return;
  project = tempProject({
    "chat-serve.config.ts": `export default {
  graphs: ${codingAgentGraphs()},
};`,
  });
  server = await startCli([], { cwd: project.dir, env: { LOG_LEVEL: "info" } });
});
after(async () => {
  if (skip) return;
  await server.stop();
  for (const home of homes) home.cleanup();
  project.cleanup();
});

/** A fresh CODEX_HOME whose config makes chat-serve the provider, over HTTP or the socket. */
function codexHome(socket: boolean): string {
  const home = freshHome();
  homes.push(home);
  mkdirSync(path.join(home.dir, ".codex"));
  writeFileSync(
    path.join(home.dir, ".codex", "config.toml"),
    `model = "coder"
model_provider = "chat-serve"

[model_providers.chat-serve]
name = "chat-serve"
base_url = "${server.baseURL}"
wire_api = "responses"
env_key = "CHAT_SERVE_API_KEY"
supports_websockets = ${socket}
`,
  );
  return home.dir;
}

/**
 * A fresh CODEX_HOME with the built-in provider at chat-serve (`openai_base_url`, a dummy
 * OPENAI_API_KEY): the WebSocket mode and remote compaction are on by default there, and a low
 * `model_auto_compact_token_limit` makes Codex compact before its second turn.
 */
function builtInHome(): string {
  const home = freshHome();
  homes.push(home);
  mkdirSync(path.join(home.dir, ".codex"));
  writeFileSync(
    path.join(home.dir, ".codex", "config.toml"),
    `model = "recaller"\nopenai_base_url = "${server.baseURL}"\nmodel_auto_compact_token_limit = 300\n`,
  );
  return home.dir;
}

/** One `codex exec --json` run (or `exec resume --last`): its events and its final message. */
async function codex(home: string, prompt: string, resume = false, model = "coder") {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    CODEX_HOME: path.join(home, ".codex"),
    CHAT_SERVE_API_KEY: "a-dummy-key",
    OPENAI_API_KEY: "a-dummy-key",
  };
  const args = ["exec", ...(resume ? ["resume", "--last"] : []), "--json", "--skip-git-repo-check", "-m", model, prompt];
  const run = await runClient(bin, args, { env, cwd: project.dir });
  const events = run.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, any>);
  const failed = events.find((event) => event.type === "turn.failed" || event.type === "error");
  assert.equal(failed, undefined, `${JSON.stringify(failed)}\n${run.stderr.slice(-1500)}`);
  const messages = events.filter((event) => event.type === "item.completed" && event.item.type === "agent_message");
  const commands = events.filter((event) => event.type === "item.completed" && event.item.type === "command_execution");
  assert.equal(run.code, 0, run.stderr.slice(-1500));
  const reasoning = events.filter((event) => event.type === "item.completed" && event.item.type === "reasoning");
  return {
    answer: messages.at(-1)?.item.text as string | undefined,
    commands: commands.map((event) => event.item),
    reasoning: reasoning.map((event) => event.item.text as string),
  };
}

describe("Codex against chat-serve", { skip, timeout: 180_000 }, () => {
  test("over HTTP: a plain answer", async () => {
    const { answer } = await codex(codexHome(false), "hello from Codex");
    assert.equal(answer, "You said: hello from Codex");
  });

  test("over HTTP: a shell round trip, then another in the next turn of the session", async () => {
    const home = codexHome(false);
    const first = await codex(home, "please run `echo codex-was-here`");
    assert.equal(first.commands.length, 1);
    assert.equal(first.commands[0].exit_code, 0);
    assert.match(first.answer ?? "", /^The command said: [\s\S]*codex-was-here$/u);
    const second = await codex(home, "please run `echo and-again`", true);
    assert.match(second.answer ?? "", /^The command said: [\s\S]*and-again$/u);
  });

  test("over the WebSocket mode: a shell round trip", async () => {
    const before = (server.output().match(/GET \/v1\/responses 101/gu) ?? []).length;
    const { answer, commands } = await codex(codexHome(true), "please run `echo over-the-socket`");
    assert.equal(commands.length, 1);
    assert.match(answer ?? "", /over-the-socket$/u);
    assert.ok((server.output().match(/GET \/v1\/responses 101/gu) ?? []).length > before, "Codex used the WebSocket");
  });

  for (const socket of [false, true]) {
    test(`over ${socket ? "the WebSocket mode" : "HTTP"}: an interrupt asked as text, answered by the next prompt (exec resume)`, async () => {
      const home = codexHome(socket);
      const asked = await codex(home, "ship the release", false, "approval");
      assert.match(asked.answer ?? "", /^May I go ahead with: ship the release\? \(approve \/ reject\)\n\n`graph_interrupt:/u);
      const answered = await codex(home, "approve", true, "approval");
      assert.equal(answered.answer, "Approved: going ahead with ship the release.");
    });
  }

  test("the built-in provider (openai_base_url): remote compaction sends a compaction_trigger, the next turn gets the summary", async () => {
    const home = builtInHome();
    const first = await codex(home, "hello one", false, "recaller");
    assert.equal(first.answer, "You said: hello one");
    const second = await codex(home, "hello two", true, "recaller");
    assert.equal(second.answer, "You said: hello two (the earlier turns came as a summary)");
  });

  test("over HTTP: a long answer streamed word by word arrives whole", async () => {
    const words = Array.from({ length: 1_500 }, (_unused, index) => `word${index}`).join(" ");
    const { answer } = await codex(codexHome(false), words, false, "recaller");
    assert.equal(answer, `You said: ${words}`);
  });

  test("over HTTP: a graph that reasons: Codex shows the reasoning (it asks for summaries), then the answer", async () => {
    const { answer, reasoning } = await codex(codexHome(false), "why is the sky blue", false, "think");
    assert.equal(reasoning.length, 1);
    assert.match(reasoning[0]!, /^The user asked something/u);
    assert.match(answer ?? "", /^I thought about "why is the sky blue"/u);
  });
});
