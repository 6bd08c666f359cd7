import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { BIN } from "../helpers/cli.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const config = (description: string) =>
  `export default { graphs: { echo: { graph: "./g.ts:graph", description: ${JSON.stringify(description)} } } };`;

test("start --watch restarts when the config or a graph module changes, and survives a broken edit", { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempProject({ "chat-serve.config.ts": config("first"), "g.ts": ECHO_GRAPH_MODULE });
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
  const description = async (baseURL: string) =>
    ((await (await fetch(`${baseURL}/models/echo`)).json()) as { graph_chat_serve: { description: string } }).graph_chat_serve.description;
  try {
    const first = await waitFor(/ready (http:\/\/\S+)/, 1);
    assert.equal(await description(first[1]!), "first");

    writeFileSync(path.join(dir, "chat-serve.config.ts"), config("second"));
    const second = await waitFor(/ready (http:\/\/\S+)/, 2);
    assert.match(output, /restarting \(chat-serve\.config\.ts changed\)/);
    assert.equal(await description(second[1]!), "second");

    writeFileSync(path.join(dir, "g.ts"), "export const graph = ;");
    await waitFor(/waiting for a change/, 1);
    assert.match(output, /error chat-serve\.config\.ts: graphs\.echo\.graph: importing '\.\/g\.ts' failed/);

    writeFileSync(path.join(dir, "g.ts"), ECHO_GRAPH_MODULE);
    const third = await waitFor(/ready (http:\/\/\S+)/, 3);
    assert.equal(await description(third[1]!), "second");
  } finally {
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 0);
    cleanup();
  }
});
