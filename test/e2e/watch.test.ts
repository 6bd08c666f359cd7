import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { BIN } from "../helpers/cli.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const config = (description: string) =>
  `export default { graphs: { echo: { graph: "./g.ts:graph", description: ${JSON.stringify(description)} } } };`;

/** Starts `start --watch` in the folder; `waitFor` waits for the nth match of a pattern in its output. */
function startWatching(dir: string) {
  const child = spawn(process.execPath, [BIN, "start", "--watch", "--port", "0"], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1", LOG_LEVEL: "warn" },
  });
  let output = "";
  child.stdout.on("data", (data: Buffer) => (output += data.toString()));
  child.stderr.on("data", (data: Buffer) => (output += data.toString()));
  const waitFor = async (pattern: RegExp, count: number): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const matches = [...output.matchAll(new RegExp(pattern, "gu"))];
      if (matches.length >= count) return matches[count - 1]!;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    return code as number | null;
  };
  return { waitFor, stop, output: () => output };
}

test("start --watch survives atomic saves (write a temporary file, rename it over the original)", { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempProject({ "chat-serve.config.ts": config("v1"), "g.ts": ECHO_GRAPH_MODULE });
  const watching = startWatching(dir);
  const atomicSave = (content: string) => {
    const temporary = path.join(dir, ".chat-serve.config.ts.swp");
    writeFileSync(temporary, content);
    renameSync(temporary, path.join(dir, "chat-serve.config.ts"));
  };
  try {
    await watching.waitFor(/ready (http:\/\/\S+)/, 1);
    for (const [round, version] of [
      [2, "v2"],
      [3, "v3"],
      [4, "v4"],
    ] as const) {
      atomicSave(config(version));
      const ready = await watching.waitFor(/ready (http:\/\/\S+)/, round);
      const model = (await (await fetch(`${ready[1]}/models/echo`)).json()) as { graph_chat_serve: { description: string } };
      assert.equal(model.graph_chat_serve.description, version, `restart ${round - 1} after an atomic save`);
    }
    assert.doesNotMatch(watching.output(), /letting open requests finish/u, "restarts do not print the shutdown line");
  } finally {
    assert.equal(await watching.stop(), 0);
    cleanup();
  }
});

test("start --watch restarts when the config or a graph module changes, and survives a broken edit", { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempProject({ "chat-serve.config.ts": config("first"), "g.ts": ECHO_GRAPH_MODULE });
  const { waitFor, stop, output: current } = startWatching(dir);
  const description = async (baseURL: string) =>
    ((await (await fetch(`${baseURL}/models/echo`)).json()) as { graph_chat_serve: { description: string } }).graph_chat_serve.description;
  try {
    const first = await waitFor(/ready (http:\/\/\S+)/, 1);
    assert.equal(await description(first[1]!), "first");

    writeFileSync(path.join(dir, "chat-serve.config.ts"), config("second"));
    const second = await waitFor(/ready (http:\/\/\S+)/, 2);
    assert.match(current(), /restarting \(chat-serve\.config\.ts changed\)/);
    assert.equal(await description(second[1]!), "second");

    writeFileSync(path.join(dir, "g.ts"), "export const graph = ;");
    await waitFor(/waiting for a change/, 1);
    assert.match(current(), /error chat-serve\.config\.ts: graphs\.echo\.graph: importing '\.\/g\.ts' failed/);

    writeFileSync(path.join(dir, "g.ts"), ECHO_GRAPH_MODULE);
    const third = await waitFor(/ready (http:\/\/\S+)/, 3);
    assert.equal(await description(third[1]!), "second");
  } finally {
    assert.equal(await stop(), 0);
    cleanup();
  }
});
