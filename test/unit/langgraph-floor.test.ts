import assert from "node:assert/strict";
import { after, test } from "node:test";
import { checkLangGraphVersions } from "../../src/cli/langgraph-floor.js";
import { runCli } from "../helpers/cli.js";
import { tempProject } from "../helpers/temp-project.js";

// A project pinned below the LangGraph.js chat-serve serves (the templates of LangGraph 0.2 and
// LangChain core 0.3) is told in one line what it has, what it needs and its package manager's
// command, before any of its code or LangGraph's loads; two copies are said at start.

const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

/** A project whose node_modules hold these versions of the LangGraph packages (manifests only). */
function projectWith(versions: Record<string, string>, files: Record<string, string> = {}) {
  const manifests = Object.fromEntries(
    Object.entries(versions).map(([name, version]) => [
      `node_modules/${name}/package.json`,
      JSON.stringify({ name, version, main: "index.js" }),
    ]),
  );
  const project = tempProject({ "package.json": JSON.stringify({ name: "old-agent", private: true }), ...manifests, ...files });
  cleanups.push(project.cleanup);
  return project.dir;
}

test("LangGraph 0.2 and core 0.3 in a yarn project: one line with what it has, what it needs and yarn's command", async () => {
  const dir = projectWith(
    { "@langchain/langgraph": "0.2.74", "@langchain/core": "0.3.66" },
    { "yarn.lock": "# yarn lockfile v1\n", "langgraph.json": JSON.stringify({ graphs: { agent: "./src/agent.ts:graph" } }) },
  );
  assert.throws(
    () => checkLangGraphVersions(dir),
    (error: Error) => {
      assert.equal(
        error.message,
        "this project has @langchain/langgraph 0.2.74 and @langchain/core 0.3.66; chat-serve serves graphs of @langchain/langgraph 1.7.0 or newer and @langchain/core 1.3.4 or newer: run `yarn add @langchain/langgraph@^1.7.0 @langchain/core@^1.3.4` (LangGraph.js 0.x graphs are not served)",
      );
      return true;
    },
  );
  const result = await runCli(["models"], { cwd: dir });
  assert.equal(result.code, 1);
  assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
  assert.match(result.stderr, /this project has @langchain\/langgraph 0\.2\.74 .*yarn add/u);
  assert.doesNotMatch(result.stderr, /crashed|bug|exports/u);
});

test("a pnpm project with a second, newer copy: served, with a warning naming both", () => {
  const dir = projectWith({ "@langchain/langgraph": "1.99.0" }, { "pnpm-lock.yaml": "lockfileVersion: '9.0'\n" });
  const warning = checkLangGraphVersions(dir);
  assert.match(
    String(warning),
    /two copies of LangGraph\.js are installed: @langchain\/langgraph 1\.99\.0 \(the project's\) and 1\.\d+\.\d+ \(chat-serve's\)/u,
  );
  assert.match(String(warning), /pnpm install/u);
});

test("the repository's own project: nothing to say", () => {
  assert.equal(checkLangGraphVersions(process.cwd()), undefined);
});

test("yarn's Plug'n'Play (no node_modules): one line with the setting that gives the project one", () => {
  const versions = process.versions as { pnp?: string };
  versions.pnp = "3";
  try {
    assert.throws(
      () => checkLangGraphVersions(projectWith({})),
      (error: Error) =>
        error.message ===
        "this project's packages are installed by yarn's Plug'n'Play, from which chat-serve cannot load a project's graphs: add `nodeLinker: node-modules` to .yarnrc.yml and run `yarn install`",
    );
  } finally {
    delete versions.pnp;
  }
});
