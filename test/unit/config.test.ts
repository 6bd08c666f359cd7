import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { loadConfig } from "../../src/config/load-config.js";
import { ConfigError } from "../../src/errors/developer-errors.js";
import { normalizePrefix, readEnvSettings } from "../../src/http/env.js";
import { registryFromConfig } from "../../src/server/from-config.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

function project(files: Record<string, string>): string {
  const { dir, cleanup } = tempProject(files);
  cleanups.push(cleanup);
  return dir;
}

async function load(dir: string, configPath?: string) {
  return registryFromConfig(await loadConfig({ cwd: dir, configPath }));
}

async function configError(dir: string, configPath?: string): Promise<string> {
  try {
    await load(dir, configPath);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.message.includes("\n"), false, "a config error is one line");
    return error.message;
  }
  assert.fail("the config should have been rejected");
}

const tsConfig = (graphs: string) => `
import { defineConfig } from "chat-serve";
export default defineConfig({ graphs: ${graphs} });
`;

describe("loading the config file", () => {
  test("a TypeScript config with module references of every kind", async () => {
    const dir = project({
      "chat-serve.config.ts": tsConfig(`{
        compiled: { graph: "./graphs/echo.ts:graph", description: "compiled", streamableNodeNames: ["respond"] },
        builder: { graph: "./graphs/echo.ts:builder", description: "builder" },
        factory: { graph: "./graphs/echo.ts:makeGraph", description: "factory", features: ["CLIENT_EVENTS"] },
        fallback: { graph: "./graphs/default.ts", description: "default export" },
      }`),
      "graphs/echo.ts": ECHO_GRAPH_MODULE,
      "graphs/default.ts": `export { graph as default } from "./echo.ts";`,
    });
    const registry = await load(dir);
    assert.deepEqual(registry.getGraphNames(), ["compiled", "builder", "factory", "fallback"]);
    assert.deepEqual(registry.getGraph("compiled").streamableNodeNames, ["respond"]);
    const output = (await (await registry.resolveGraph("builder")).invoke({ messages: [] })) as { messages: { text: string }[] };
    assert.equal(output.messages.at(-1)?.text, "from a builder");
  });

  test("server settings get their defaults", async () => {
    const dir = project({
      "chat-serve.config.ts": tsConfig(`{ e: { graph: "./g.ts:graph", description: "x" } }`),
      "g.ts": ECHO_GRAPH_MODULE,
    });
    const loaded = await loadConfig({ cwd: dir });
    assert.deepEqual(loaded.config.server, {
      host: "127.0.0.1",
      port: 8000,
      prefix: "/v1",
      docs: false,
      bodyLimit: 1_048_576,
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      shutdownGraceMs: 10_000,
      stalledClientTimeoutMs: 30_000,
    });
    assert.equal(loaded.config.backendTimeoutMs, 2_000);
  });

  test(".mjs, .mts and .json configs, and --config pointing elsewhere", async () => {
    const mjs = project({
      "chat-serve.config.mjs": `export default { graphs: { e: { graph: "./g.ts:graph", description: "from mjs" } } };`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    assert.equal((await load(mjs)).getGraph("e").description, "from mjs");
    const mts = project({
      "chat-serve.config.mts": `const description: string = "from mts"; export default { graphs: { e: { graph: "./g.ts:graph", description } } };`,
      "g.ts": ECHO_GRAPH_MODULE,
    });
    assert.equal((await load(mts)).getGraph("e").description, "from mts");
    const json = project({
      "chat-serve.config.json": JSON.stringify({ graphs: { e: { graph: "./g.ts:graph", description: "from json" } } }),
      "g.ts": ECHO_GRAPH_MODULE,
    });
    assert.equal((await load(json)).getGraph("e").description, "from json");
    const elsewhere = project({
      "configs/staging.ts": tsConfig(`{ e: { graph: "../g.ts:graph", description: "staging" } }`),
      "g.ts": ECHO_GRAPH_MODULE,
    });
    assert.equal((await load(elsewhere, "configs/staging.ts")).getGraph("e").description, "staging");
  });
});

describe("config mistakes are one line naming the file and the key", () => {
  const graphModule = { "g.ts": ECHO_GRAPH_MODULE };
  test("a missing description", async () => {
    const dir = project({ "chat-serve.config.ts": tsConfig(`{ echo: { graph: "./g.ts:graph" } }`), ...graphModule });
    assert.match(await configError(dir), /^chat-serve\.config\.ts: graphs\.echo\.description: is required/);
  });
  test("an unknown key", async () => {
    const dir = project({
      "chat-serve.config.ts": `export default { server: { colour: "red" }, graphs: { e: { graph: "./g.ts:graph", description: "x" } } };`,
      ...graphModule,
    });
    assert.match(await configError(dir), /^chat-serve\.config\.ts: server: .*colour/);
  });
  test("no graphs", async () => {
    const dir = project({ "chat-serve.config.ts": tsConfig("{}") });
    assert.match(await configError(dir), /^chat-serve\.config\.ts: graphs: must register at least one graph/);
  });
  test("a module that does not exist", async () => {
    const dir = project({ "chat-serve.config.ts": tsConfig(`{ echo: { graph: "./missing.ts:graph", description: "x" } }`) });
    assert.match(await configError(dir), /^chat-serve\.config\.ts: graphs\.echo\.graph: cannot find module '\.\/missing\.ts'/);
  });
  test("an export that does not exist", async () => {
    const dir = project({ "chat-serve.config.ts": tsConfig(`{ echo: { graph: "./g.ts:grahp", description: "x" } }`), ...graphModule });
    assert.match(await configError(dir), /graphs\.echo\.graph: '\.\/g\.ts' has no export 'grahp' \(it exports: .*graph/);
  });
  test("an export that is not a graph", async () => {
    const dir = project({ "chat-serve.config.ts": tsConfig(`{ echo: { graph: "./g.ts:notAGraph", description: "x" } }`), ...graphModule });
    assert.match(await configError(dir), /^chat-serve\.config\.ts: graphs\.echo\.graph: must be a compiled graph/);
    const factory = project({
      "chat-serve.config.ts": tsConfig(`{ echo: { graph: () => 42, description: "x" } }`),
    });
    assert.match(await configError(factory), /^chat-serve\.config\.ts: graphs\.echo: could not load its graph/);
  });
  test("a graph module that throws on import", async () => {
    const dir = project({
      "chat-serve.config.ts": tsConfig(`{ echo: { graph: "./bad.ts:graph", description: "x" } }`),
      "bad.ts": `throw new Error("OPENAI_API_KEY is not set");`,
    });
    // Named with the line that threw (on line 1, without a column: the loader's wrapper shifts it).
    assert.match(await configError(dir), /graphs\.echo\.graph: importing '\.\/bad\.ts' failed at bad\.ts:1: OPENAI_API_KEY is not set$/);
  });
  test("a graph module importing a package that is not installed names its own file and the line of the import", async () => {
    const dir = project({
      "chat-serve.config.ts": tsConfig(`{ echo: { graph: "./graphs/agent.ts:graph", description: "x" } }`),
      "graphs/agent.ts": `import { z } from "zod";\nimport { helper } from "not-an-installed-package";\nexport const graph = [z, helper];\n`,
    });
    // Never node's own loader as the place ("modules/cjs/loader:1207:15"), never "a bug in chat-serve".
    assert.match(
      await configError(dir),
      /graphs\.echo\.graph: importing '\.\/graphs\/agent\.ts' failed at graphs\/agent\.ts:2: Cannot find module 'not-an-installed-package'/u,
    );
  });
  test("a config file with a syntax error names file:line:column and what is wrong", async () => {
    const dir = project({ "chat-serve.config.ts": `export default { graphs: {` });
    assert.match(await configError(dir), /^chat-serve\.config\.ts:1:\d+: could not be loaded: \S/u);
    const typo = project({
      "chat-serve.config.ts": `export default {\n  graphs: { e: { graph: "./g.ts:graph" description: "x" } },\n};\n`,
    });
    assert.equal(await configError(typo), 'chat-serve.config.ts:2:40: could not be loaded: ParseError: Unexpected token, expected ","');
    const json = project({ "chat-serve.config.json": `{\n  "graphs": { "e": { "graph": "./g.ts:graph", } }\n}` });
    assert.equal(await configError(json), "chat-serve.config.json:2:47: could not be loaded: Expected double-quoted property name");
  });

  test("a misspelt key is named, with a did-you-mean, before what it causes", async () => {
    const top = project({ "chat-serve.config.ts": `export default { grpahs: {} };` });
    assert.equal(await configError(top), "chat-serve.config.ts: unknown key 'grpahs'; did you mean 'graphs'?");
    const nested = project({
      "chat-serve.config.ts": `export default { server: { prot: 1 }, graphs: { e: { graph: "./g.ts:graph", description: "x" } } };`,
    });
    assert.equal(await configError(nested), "chat-serve.config.ts: server: unknown key 'prot'; did you mean 'port'?");
    const several = project({
      "chat-serve.config.ts": `export default { grpahs: {}, server: { prot: 1, colour: "red" } };`,
    });
    assert.equal(
      await configError(several),
      "chat-serve.config.ts: unknown keys 'grpahs' (did you mean 'graphs'?), 'server.prot' (did you mean 'port'?) and 'server.colour'",
    );
  });
  test("no config file at all, and a --config that does not exist", async () => {
    const dir = project({ "README.md": "empty" });
    assert.match(await configError(dir), /no config file found .*'chat-serve init'/);
    assert.match(await configError(dir, "nope.ts"), /config file not found: nope\.ts/);
  });
});

describe("environment settings", () => {
  test("prefix rules: must start with /, trailing slashes dropped", () => {
    assert.equal(normalizePrefix("/v1/"), "/v1");
    assert.equal(normalizePrefix("/api/v1"), "/api/v1");
    assert.equal(normalizePrefix("/"), "");
    assert.throws(() => normalizePrefix("v1"), ConfigError);
  });
  test("booleans and the prefix are read and checked", () => {
    assert.deepEqual(readEnvSettings({ SVC_CHAT_API_PREFIX: "/x/", SVC_CHAT_API_DOCS_ENABLED: "TRUE" }), {
      prefix: "/x",
      docsEnabled: true,
      tracingEnabled: false,
      tracingPublicKey: undefined,
      tracingSecretKey: undefined,
      tracingBaseUrl: undefined,
    });
    assert.throws(() => readEnvSettings({ SVC_CHAT_API_DOCS_ENABLED: "maybe" }), /SVC_CHAT_API_DOCS_ENABLED must be true or false/);
    assert.throws(() => readEnvSettings({ SVC_CHAT_API_PREFIX: "api" }), /SVC_CHAT_API_PREFIX must start with '\/'/);
  });
});
