import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { agentServerSettings, configSchema } from "../../src/config/define-config.js";
import { readLangGraphJson } from "../../src/config/langgraph-json.js";

// langgraph.json's `http` block read into a config's keys: what each key becomes, the defaults
// LangGraph.js's server has, and one line naming the key for what cannot be served.

const dir = mkdtempSync(path.join(tmpdir(), "langgraph-json-http-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function read(http: unknown) {
  const file = path.join(dir, "langgraph.json");
  writeFileSync(file, JSON.stringify({ graphs: { agent: "./agent.ts:graph" }, ...(http === undefined ? {} : { http }) }));
  return readLangGraphJson(file, "langgraph.json");
}

const settings = (http: unknown) => agentServerSettings(read(http));

test("no http block: any origin may call, as LangGraph.js's server answers; nothing else changes", () => {
  assert.deepEqual(settings(undefined), { server: { cors: { origins: ["*"] } } });
});

test("every key of http becomes the config's, and the config accepts them", () => {
  const project = read({
    app: "./app.ts:app",
    enable_custom_route_auth: true,
    mount_prefix: "/api",
    disable_assistants: true,
    disable_threads: false,
    disable_store: true,
    disable_meta: true,
    disable_mcp: true,
    disable_a2a: true,
    disable_ui: true,
    cors: { allow_origin_regex: "https://.*\\.example\\.com", allow_methods: ["GET"], max_age: 60, expose_headers: ["x-mine"] },
    configurable_headers: { include: ["x-org-*"], excludes: ["x-org-secret"] },
  });
  assert.deepEqual(project.ignoredKeys, []);
  const mapped = agentServerSettings(project);
  assert.deepEqual(mapped, {
    server: {
      cors: { originRegex: "https://.*\\.example\\.com", methods: ["GET"], exposeHeaders: ["x-mine"], maxAge: 60 },
      langgraph: {
        prefix: "/api",
        disableAssistants: true,
        disableStore: true,
        disableMeta: true,
        configurableHeaders: { includes: ["x-org-*"], excludes: ["x-org-secret"] },
      },
      mcp: false,
      a2a: false,
    },
    http: { app: "./app.ts:app", enableCustomRouteAuth: true, prefix: "/api" },
  });
  const parsed = configSchema.safeParse({ graphs: { agent: { graph: "./agent.ts:graph", description: "An agent." } }, ...mapped });
  assert.equal(parsed.success, true, JSON.stringify(parsed.error?.issues));
});

test("CORS without origins allows any, as LangGraph.js's server does", () => {
  assert.deepEqual(settings({ cors: { allow_credentials: true } }).server, { cors: { origins: ["*"], credentials: true } });
});

test("a key chat-serve does not read is named as ignored", () => {
  assert.deepEqual(read({ middleware_order: "auth_first" }).ignoredKeys, ["http.middleware_order"]);
});

test("what cannot be served is one line naming the file and the key", () => {
  const message = (http: unknown) => {
    try {
      read(http);
    } catch (error) {
      return (error as Error).message;
    }
    return "read";
  };
  assert.equal(message({ mount_prefix: "api" }), "langgraph.json: http.mount_prefix: must be a path such as '/api'");
  assert.equal(message({ disable_store: "yes" }), "langgraph.json: http.disable_store: must be true or false");
  assert.equal(
    message({ cors: { allow_origin_regex: "(" } }),
    "langgraph.json: http.cors.allow_origin_regex: must be a regular expression",
  );
  assert.equal(
    message({ configurable_headers: { includes: ["x-(org)"] } }),
    "langgraph.json: http.configurable_headers.includes.0: must be a header name, or a pattern with * (no other pattern characters)",
  );
});

test("store.ttl becomes graphStore.ttl, and the config accepts it", () => {
  const file = path.join(dir, "langgraph.json");
  writeFileSync(
    file,
    JSON.stringify({
      graphs: { agent: "./agent.ts:graph" },
      store: { ttl: { default_ttl: 30, refresh_on_read: false, sweep_interval_minutes: 5 } },
    }),
  );
  const project = readLangGraphJson(file, "langgraph.json");
  assert.deepEqual(project.ignoredKeys, []);
  const mapped = agentServerSettings(project);
  assert.deepEqual(mapped.graphStore, { ttl: { defaultTtl: 30, refreshOnRead: false, sweepIntervalMinutes: 5 } });
  const parsed = configSchema.safeParse({ graphs: { agent: { graph: "./agent.ts:graph", description: "An agent." } }, ...mapped });
  assert.equal(parsed.success, true, JSON.stringify(parsed.error?.issues));
});

test("webhooks and disable_webhooks become the Agent Protocol's; a header naming a variable outside the prefix is one line", () => {
  const file = path.join(dir, "langgraph.json");
  const write = (extra: object) => {
    writeFileSync(file, JSON.stringify({ graphs: { agent: "./agent.ts:graph" }, ...extra }));
    return readLangGraphJson(file, "langgraph.json");
  };
  process.env.LG_WEBHOOK_SECRET_FOR_TEST = "s";
  try {
    const project = write({
      http: { disable_webhooks: false },
      webhooks: {
        env_prefix: "LG_WEBHOOK_",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: LangGraph's own header template syntax
        headers: { authorization: "Bearer ${{ env.LG_WEBHOOK_SECRET_FOR_TEST }}" },
        url: { require_https: true, allowed_domains: ["*.example.com"], allowed_ports: [443], max_url_length: 300, disable_loopback: true },
      },
    });
    assert.deepEqual(project.ignoredKeys, []);
    assert.deepEqual((agentServerSettings(project).server as { langgraph: unknown }).langgraph, {
      webhooks: {
        requireHttps: true,
        allowedDomains: ["*.example.com"],
        allowedPorts: [443],
        maxUrlLength: 300,
        disableLoopback: true,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: LangGraph's own header template syntax
        headers: { authorization: "Bearer ${{ env.LG_WEBHOOK_SECRET_FOR_TEST }}" },
        envPrefix: "LG_WEBHOOK_",
      },
    });
    assert.throws(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: LangGraph's own header template syntax
      () => write({ webhooks: { headers: { authorization: "${{ env.HOME }}" } } }),
      /^ConfigError: langgraph\.json: webhooks\.headers\.authorization: names HOME, which does not start with LG_WEBHOOK_$/u,
    );
  } finally {
    delete process.env.LG_WEBHOOK_SECRET_FOR_TEST;
  }
});
