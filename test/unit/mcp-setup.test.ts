import assert from "node:assert/strict";
import { test } from "node:test";
import { mcpBannerLine, mcpSettings } from "../../src/cli/mcp-setup.js";
import { configSchema } from "../../src/config/define-config.js";

test("server.mcp: on by default on loopback only; sessions unless the config or --workers says otherwise", () => {
  assert.deepEqual(mcpSettings(undefined, true, false), { sessions: true, loopbackOnly: true });
  assert.equal(mcpSettings(undefined, false, false), undefined, "off on a network address unless asked for");
  assert.deepEqual(mcpSettings(true, false, false), { sessions: true, loopbackOnly: false });
  assert.equal(mcpSettings(false, true, false), undefined);
  assert.deepEqual(mcpSettings({ sessions: false }, false, false), { sessions: false, loopbackOnly: false });
  assert.deepEqual(mcpSettings(true, true, true), { sessions: false, loopbackOnly: true }, "a worker of --workers keeps no sessions");
  assert.match(mcpBannerLine("http://127.0.0.1:8000/v1", { sessions: false })!, /\/v1\/mcp {2}\(Streamable HTTP; no sessions/u);
});

test("server.mcp accepts true, false or { sessions }, and nothing else", () => {
  for (const mcp of [true, false, { sessions: false }, {}])
    assert.equal(
      configSchema.safeParse({ server: { mcp }, graphs: { echo: { graph: "./echo.ts:graph", description: "Echo." } } }).success,
      true,
    );
  for (const mcp of ["yes", { sesions: false }, { sessions: "no" }])
    assert.equal(
      configSchema.safeParse({ server: { mcp }, graphs: { echo: { graph: "./echo.ts:graph", description: "Echo." } } }).success,
      false,
    );
});
