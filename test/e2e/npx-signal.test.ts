import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { REPO_ROOT } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";

test("under `npx chat-serve start`, a SIGTERM to npm stops the server too (npm's sh -c does not pass it on)", {
  timeout: 90_000,
}, async () => {
  // As README users run it: npm resolves the bin, and runs it under `sh -c`.
  const npm = spawn("npm", ["exec", "--offline", "--", "chat-serve", "start", "--port", "0"], {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: "1", LOG_LEVEL: "warn" },
  });
  let output = "";
  npm.stdout.on("data", (data: Buffer) => (output += data.toString()));
  npm.stderr.on("data", (data: Buffer) => (output += data.toString()));
  let baseURL = "";
  await eventually(async () => {
    baseURL = /ready (http:\/\/\S+)/u.exec(output)?.[1] ?? "";
    assert.notEqual(baseURL, "", output);
  }, 60_000);
  assert.equal((await fetch(`${baseURL}/models`)).status, 200);
  const exited = once(npm, "exit");
  npm.kill("SIGTERM");
  await exited;
  // npm is gone; the server notices its parent left and drains as on its own SIGTERM.
  await eventually(async () => {
    const refused = await fetch(`${baseURL}/models`).then(
      () => false,
      () => true,
    );
    assert.equal(refused, true, `the server still answers after npm exited:\n${output}`);
  }, 15_000);
  assert.match(output, /npm exited: letting open requests finish/u);
});
