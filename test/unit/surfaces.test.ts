import assert from "node:assert/strict";
import { test } from "node:test";
import { apiSurfaces, switchSettings } from "../../src/app/surfaces.js";
import { configSchema } from "../../src/config/define-config.js";
import { readEnvSettings } from "../../src/http/env.js";

const env = readEnvSettings({});
/** What `start` serves for `server.mcp` on a loopback or network address, in a worker or not (undefined: off). */
function mcpSettings(value: unknown, loopback: boolean, isWorker: boolean) {
  const setting = switchSettings({ mcp: value }, { loopback, isWorker, shared: false, env }).mcp;
  return setting === false ? undefined : setting;
}

const BASE = "http://127.0.0.1:8000/v1";
/** The banner rows of the agent surfaces a selection serves. */
function agentRows(mcp: Parameters<typeof apiSurfaces>[0]["mcp"], a2a: boolean, background: boolean): [string, string][] {
  return apiSurfaces({ docs: false, playground: false, mcp, a2a }, { models: ["echo"], background, version: "1", env })
    .filter((surface) => surface.name === "mcp" || surface.name === "a2a")
    .flatMap((surface) => surface.bannerRows?.(BASE, "http://127.0.0.1:8000") ?? []);
}

test("server.mcp: on by default on loopback only; sessions unless the config or --workers says otherwise", () => {
  assert.deepEqual(mcpSettings(undefined, true, false), { sessions: true, loopbackOnly: true });
  assert.equal(mcpSettings(undefined, false, false), undefined, "off on a network address unless asked for");
  assert.deepEqual(mcpSettings(true, false, false), { sessions: true, loopbackOnly: false });
  assert.equal(mcpSettings(false, true, false), undefined);
  assert.deepEqual(mcpSettings({ sessions: false }, false, false), { sessions: false, loopbackOnly: false });
  assert.deepEqual(mcpSettings(true, true, true), { sessions: false, loopbackOnly: true }, "a worker of --workers keeps no sessions");
  const rows = agentRows({ sessions: false }, false, true);
  assert.equal(rows.length, 1);
  assert.match(rows[0]![1], /\/v1\/mcp {2}\(Streamable HTTP; no sessions/u);
});

test("the banner's a2a row: the cards' URL, or why A2A is not available", () => {
  const served = agentRows(undefined, true, true);
  assert.deepEqual(
    served.map(([name]) => name),
    ["a2a"],
  );
  assert.match(served[0]![1], /\/v1\/a2a {2}\(agent cards; A2A 1\.0 and 0\.3/u);
  const unavailable = agentRows(undefined, true, false);
  assert.match(unavailable[0]![1], /^not available: A2A tasks are background runs/u);
  assert.deepEqual(agentRows(undefined, false, true), [], "off: no row");
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
