import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, describe, test } from "node:test";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { runCli, startCli } from "../helpers/cli.js";
import { REDIS_URL, requireRedis, uniquePrefix } from "../helpers/services.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const redis = await requireRedis();
const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

function project(config: string, extra: Record<string, string> = {}) {
  const created = tempProject({ "chat-serve.config.ts": config, "graph.ts": ECHO_GRAPH_MODULE, ...extra });
  cleanups.push(created.cleanup);
  return created.dir;
}

const KEY = "sk-team-0123456789abcdef";

describe("production settings from the config file", () => {
  test("keys from the environment and from keysFile; a wrong key is a 401", async () => {
    const dir = project(
      `export default {
  auth: { keys: [{ tenant: "team", key: process.env.TEAM_KEY }], keysFile: "./keys.json" },
  graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } },
};`,
      { "keys.json": JSON.stringify([{ tenant: "ops", sha256: createHash("sha256").update("sk-ops-0123456789abcdef").digest("hex") }]) },
    );
    const server = await startCli([], { cwd: dir, env: { TEAM_KEY: KEY } });
    try {
      for (const key of [KEY, "sk-ops-0123456789abcdef"]) {
        const client = new OpenAI({ baseURL: server.baseURL, apiKey: key, maxRetries: 0 });
        const completion = await client.chat.completions.create({ model: "echo", messages: [{ role: "user", content: "hi" }] });
        assert.equal(completion.choices[0]?.message.content, "echo: hi");
      }
      const wrong = new OpenAI({ baseURL: server.baseURL, apiKey: "sk-wrong-0123456789abcdef", maxRetries: 0 });
      await assert.rejects(wrong.models.list(), OpenAI.AuthenticationError);
    } finally {
      await server.stop();
    }
  });

  test("an unset key variable, a bad keys file, an unknown model and a bad preset are one line each, naming the file and key", async () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      [
        `export default { auth: { keys: [{ tenant: "team", key: process.env.NOT_SET_ANYWHERE }] }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
        {},
        /^error chat-serve\.config\.ts: auth\.keys\.0: needs exactly one of key or sha256 \(is the environment variable that holds the key set\?\)$/u,
      ],
      [
        `export default { auth: { keysFile: "./keys.json" }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
        { "keys.json": '[{ "tenant": "x", "sha256": "abc" }]' },
        /^error chat-serve\.config\.ts: auth\.keysFile: \.\/keys\.json: 0\.sha256: must be the 64 hex digits of the key's SHA-256$/u,
      ],
      [
        `export default { auth: { keys: [{ tenant: "t", key: "${KEY}", models: ["ecoh"] }] }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
        {},
        /^error chat-serve\.config\.ts: auth\.keys\.0\.models: 'ecoh' is not a model here; did you mean 'echo'\?$/u,
      ],
      [
        `export default { limits: { perModel: { ecoh: { requestsPerMinute: 1 } } }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
        {},
        /^error chat-serve\.config\.ts: limits\.perModel\.ecoh: 'ecoh' is not a model here; did you mean 'echo'\?$/u,
      ],
      [
        `export default { presets: { deep: { from: "ecoh", settings: {} } }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
        {},
        /^error chat-serve\.config\.ts: presets\.deep\.from: 'ecoh' is not a model here; did you mean 'echo'\?$/u,
      ],
      [
        `export default { presets: { deep: { from: "echo", settings: { depth: 5 } } }, graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } } };`,
        {},
        /^error chat-serve\.config\.ts: presets\.deep\.settings: is a preset, but its graph takes no client settings$/u,
      ],
    ];
    for (const [config, files, expected] of cases) {
      const dir = project(config, files);
      for (const command of [["start", "--port", "0"], ["models"]]) {
        const result = await runCli(command, { cwd: dir });
        assert.equal(result.code, 1, result.stdout);
        assert.match(result.stderr.trim(), expected, command[0]);
      }
    }
  });

  test("two processes with a Redis coordinator share one request limit", { skip: redis.skip }, async () => {
    const keyPrefix = uniquePrefix();
    const dir = project(`export default {
  coordinator: { kind: "redis", url: "${REDIS_URL}", keyPrefix: "${keyPrefix}" },
  limits: { requestsPerMinute: 5 },
  graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } },
};`);
    const servers = await Promise.all([startCli([], { cwd: dir }), startCli([], { cwd: dir })]);
    const client = new Redis(REDIS_URL);
    try {
      let ok = 0;
      let limited = 0;
      for (let index = 0; index < 12; index += 1) {
        const response = await fetch(`${servers[index % 2]!.baseURL}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "echo", messages: [{ role: "user", content: "hi" }] }),
        });
        if (response.status === 200) ok += 1;
        if (response.status === 429) limited += 1;
      }
      assert.deepEqual({ ok, limited }, { ok: 5, limited: 7 });
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
      const keys = await client.keys(`${keyPrefix}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    }
  });
});
