import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";
import { REPO_ROOT } from "../helpers/cli.js";

const read = (file: string) => readFileSync(new URL(file, `file://${REPO_ROOT.replace(/\/?$/u, "/")}`), "utf8");

test("the playground draws its markers with characters every font has, not emoji", () => {
  for (const file of readdirSync(new URL("playground/", `file://${REPO_ROOT.replace(/\/?$/u, "/")}`))) {
    if (!/\.(css|js|html)$/u.test(file)) continue;
    // Emoji-presentation characters show as an empty box on a machine with no emoji font.
    assert.doesNotMatch(read(`playground/${file}`), /\p{Emoji_Presentation}/u, `playground/${file}`);
  }
});

test("the demo config's comments point at documents that say what they promise", () => {
  const config = read("chat-serve.config.ts");
  for (const [, file, section] of config.matchAll(/see (docs\/[\w-]+\.md)(?: \("([^"]+)"\))?/gu)) {
    const text = read(file!);
    if (section !== undefined) assert.ok(text.includes(`## ${section}`), `${file} has a section '${section}'`);
  }
  assert.doesNotMatch(config, /see the README/u);
  assert.match(config, /`npm start` serves them/u);
});

test("the docs name the playground's buttons as the page labels them", () => {
  const page = read("playground/index.html");
  for (const [, label] of read("docs/playground.md").matchAll(/\*\*(New [a-z]+)\*\*/gu)) {
    assert.ok(page.includes(`>${label}<`), `the playground has a button '${label}'`);
  }
});

test("the README's commands work before chat-serve is on the registry: npm start, and npm link for a project", () => {
  const readme = read("README.md");
  const quickStart = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("## Serve your own graphs"));
  assert.match(quickStart, /```sh\nnpm install\nnpm start\n```/u);
  const ownGraphs = readme.slice(readme.indexOf("## Serve your own graphs"), readme.indexOf("## What it does"));
  assert.match(ownGraphs, /npm link .*\n.*\nchat-serve start/u);
});

test("the two dependencies npm warns about on Node 20 (cookie 2, content-disposition 3) load and work as their dependents load them", () => {
  // Both are ES modules that their CommonJS dependents require(): Node 20.19 and later do that,
  // which is what their "node >= 22" engines field stands for (README, "Node 20 and npm's warning").
  const fromStatic = createRequire(createRequire(import.meta.url).resolve("@fastify/static"));
  const { create } = fromStatic("content-disposition") as { create: (name: string) => string };
  assert.equal(create("notes.txt"), "attachment; filename=notes.txt");
  const fromInject = createRequire(createRequire(createRequire(import.meta.url).resolve("fastify")).resolve("light-my-request"));
  const { parseCookie } = fromInject("cookie") as { parseCookie: (text: string) => Record<string, string> };
  assert.deepEqual({ ...parseCookie("a=1; b=two") }, { a: "1", b: "two" });
  assert.match(read("README.md"), /EBADENGINE/u);
});
