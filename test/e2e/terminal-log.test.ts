import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { BIN, REPO_ROOT } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";

test("in a terminal, each request is one readable log line with its outcome", { timeout: 60_000 }, async () => {
  // `script` gives the server a terminal, where logs are pretty-printed rather than JSON.
  const child = spawn("script", ["-qfec", `${process.execPath} ${BIN} start --port 0`, "/dev/null"], {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: "1", LOG_LEVEL: "info", LOG_FORMAT: "" },
  });
  let output = "";
  child.stdout.on("data", (data: Buffer) => (output += data.toString()));
  try {
    let baseURL = "";
    await eventually(async () => {
      baseURL = /ready (http:\/\/\S+)/u.exec(output)?.[1] ?? "";
      assert.notEqual(baseURL, "", output);
    }, 30_000);
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "one-line" },
      body: JSON.stringify({ model: "echo", messages: [{ role: "user", content: "hello" }], stream: true }),
    });
    await response.text();
    await eventually(async () => assert.match(output, /one-line/u, output), 10_000);
    const lines = output.split(/\r?\n/u);
    const index = lines.findIndex((line) => line.includes("POST /v1/chat/completions"));
    assert.match(lines[index] ?? "", /INFO.*POST \/v1\/chat\/completions 200 echo \d+ms completed .*"requestId":"one-line"/u, output);
    assert.doesNotMatch(lines[index + 1] ?? "", /^\s+(method|status|durationMs|outcome):/u, "no field on a line of its own");
  } finally {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
});
