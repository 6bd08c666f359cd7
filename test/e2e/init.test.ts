import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import OpenAI from "openai";
import { REPO_ROOT, runCli, startCli } from "../helpers/cli.js";

const run = promisify(execFile);
const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function tempFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "chat-serve-init-"));
  folders.push(folder);
  return folder;
}

describe("chat-serve init", () => {
  test("scaffolds a project whose own test and `chat-serve models` pass with the local chat-serve", { timeout: 300_000 }, async () => {
    const root = tempFolder();
    const project = path.join(root, "my-assistant");
    const init = await runCli(["init", project]);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /next:\n {2}cd .*my-assistant\n {2}npm install\n {2}npx chat-serve start\n {2}npm test/);
    for (const file of [
      "package.json",
      "chat-serve.config.ts",
      "graphs/assistant.ts",
      "test/assistant.test.ts",
      "README.md",
      ".gitignore",
    ]) {
      assert.ok(existsSync(path.join(project, file)), `${file} was written`);
    }
    assert.equal(existsSync(path.join(project, "_gitignore")), false);
    const manifest = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8"));
    assert.equal(manifest.name, "my-assistant");
    // Run from this checkout: the project depends on it, so it installs with no registry entry for chat-serve.
    assert.equal(manifest.dependencies["chat-serve"], `file:${path.relative(project, REPO_ROOT)}`);
    assert.equal(readFileSync(path.join(project, ".npmrc"), "utf8"), "install-links=true\n");
    assert.match(readFileSync(path.join(project, "README.md"), "utf8"), /gets chat-serve from a checkout of it/u);
    assert.match(manifest.dependencies["@langchain/langgraph"], /^\^1\./);
    assert.match(readFileSync(path.join(project, "README.md"), "utf8"), /^# my-assistant/);

    // The project's own README command, as a newcomer runs it.
    await run("npm", ["install", "--no-audit", "--no-fund"], { cwd: project, timeout: 240_000 });

    // The generated project's runner must not think it runs inside this test file's runner.
    const { NODE_TEST_CONTEXT: _inner, ...env } = process.env;
    const projectTest = await run("npm", ["test"], { cwd: project, env }).catch((error: { stdout: string; stderr: string }) => error);
    assert.match(projectTest.stdout, /# pass 2\n# fail 0/, projectTest.stderr);
    const models = await run(process.execPath, [path.join(project, "node_modules/chat-serve/bin/chat-serve.js"), "models", "--json"], {
      cwd: project,
    });
    assert.deepEqual(
      JSON.parse(models.stdout).map((row: { id: string }) => row.id),
      ["assistant"],
    );

    // Tracing's OpenTelemetry packages are optional peers: not installed, and named when tracing is turned on.
    assert.equal(existsSync(path.join(project, "node_modules/@opentelemetry/sdk-trace-base")), false);
    assert.equal(existsSync(path.join(project, "node_modules/@langfuse")), false);
    const traced = await run(process.execPath, [path.join(project, "node_modules/chat-serve/bin/chat-serve.js"), "start", "--port", "0"], {
      cwd: project,
      env: { ...env, NO_COLOR: "1", SVC_ENABLE_TRACING: "true", TRACING_PUBLIC_KEY: "pk", TRACING_SECRET_KEY: "sk" },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    assert.equal((traced as { code?: number }).code, 1);
    assert.match(
      traced.stderr.trim(),
      /^error SVC_ENABLE_TRACING is true but tracing's packages are not installed \(.*@opentelemetry\/sdk-trace-base\); install them with: npm install @langfuse\/langchain .*$/u,
    );
    assert.equal(traced.stdout, "", "refused before loading the config");
  });

  test("from an installed tarball: the project keeps a copy of it, installs with no registry entry for chat-serve, and serves", {
    timeout: 400_000,
  }, async () => {
    const root = tempFolder();
    // The package as it would be published (dist is already built by `npm test`).
    const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", root], { cwd: REPO_ROOT });
    const tarball = path.join(root, JSON.parse(packed.stdout)[0].filename);
    // Installed where a newcomer would have it: a folder of their own, from the tarball.
    const tools = path.join(root, "tools");
    mkdirSync(tools);
    writeFileSync(path.join(tools, "package.json"), '{ "private": true }');
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], { cwd: tools, timeout: 240_000 });
    const installedBin = path.join(tools, "node_modules/chat-serve/bin/chat-serve.js");
    const project = path.join(root, "from-tarball");
    await run(process.execPath, [installedBin, "init", project], { cwd: root });

    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    const kept = `chat-serve-${version}.tgz`;
    const manifest = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8"));
    assert.equal(manifest.dependencies["chat-serve"], `file:${kept}`);
    assert.ok(existsSync(path.join(project, kept)), "the tarball is kept in the project");
    assert.equal(existsSync(path.join(project, ".npmrc")), false);
    assert.ok(readFileSync(path.join(project, "README.md"), "utf8").includes(`gets chat-serve from \`${kept}\`, a packed copy`));
    // The tarball may go away: the project no longer needs it.
    rmSync(tarball);

    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, timeout: 240_000 });
    const { NODE_TEST_CONTEXT: _inner, ...env } = process.env;
    const projectTest = await run("npm", ["test"], { cwd: project, env }).catch((error: { stdout: string; stderr: string }) => error);
    assert.match(projectTest.stdout, /# pass 2\n# fail 0/, projectTest.stderr);

    const server = await startCli([], { cwd: project, bin: path.join(project, "node_modules/chat-serve/bin/chat-serve.js") });
    try {
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused" });
      const completion = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "hello" }] });
      assert.equal(completion.choices[0]?.message.content, "Hello! You said: hello");
      // The same model through LangGraph's own client, at the server root.
      const langgraph = new Client({ apiUrl: new URL(server.baseURL).origin });
      const values = (await langgraph.runs.wait(null, "assistant", { input: { messages: [{ role: "user", content: "hello" }] } })) as {
        messages: { content: string }[];
      };
      assert.equal(values.messages.at(-1)?.content, "Hello! You said: hello");
    } finally {
      await server.stop();
    }
  });

  test("refuses a folder that is not empty, and --force writes over it saying so", async () => {
    const folder = tempFolder();
    writeFileSync(path.join(folder, "chat-serve.config.ts"), "// mine");
    const refused = await runCli(["init", folder]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim(), `error ${folder} is not empty; pick an empty folder, or pass --force to write over its files`);
    assert.equal(readFileSync(path.join(folder, "chat-serve.config.ts"), "utf8"), "// mine", "nothing was overwritten");
    const forced = await runCli(["init", folder, "--force"]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /chat-serve\.config\.ts \(overwritten\)/);
    assert.notEqual(readFileSync(path.join(folder, "chat-serve.config.ts"), "utf8"), "// mine");
  });

  test("an unknown template, and a path that is a file, are clear errors", async () => {
    const unknown = await runCli(["init", path.join(tempFolder(), "x"), "--template", "fancy"]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr.trim(), "error unknown template 'fancy'; available: default");
    const file = path.join(tempFolder(), "a-file");
    writeFileSync(file, "x");
    const notFolder = await runCli(["init", file]);
    assert.equal(notFolder.code, 1);
    assert.match(notFolder.stderr, /is not a folder/);
  });
});
