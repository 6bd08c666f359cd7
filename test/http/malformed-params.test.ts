import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startDemoServer } from "../helpers/mcp.js";

// Params a client got wrong are -32602 with a sentence, on MCP and on A2A 0.3: never -32603 with
// a TypeError's text or a schema's dump of issues.
describe("malformed JSON-RPC params on MCP and A2A 0.3", () => {
  let server: Awaited<ReturnType<typeof startDemoServer>>;
  before(async () => {
    server = await startDemoServer({ mcp: { sessions: false }, a2a: true });
  });
  after(async () => {
    await server.close();
  });

  async function rpc(path: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${server.origin}/v1${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { id: unknown; error?: { code: number; message: string } } };
  }

  for (const [what, params, expected] of [
    [
      "logging/setLevel with a level that is none",
      { level: "loud" },
      /^Invalid params for logging\/setLevel: params\.level must be one of debug, info, .*emergency\.$/u,
    ],
    [
      "tools/call with a numeric name",
      { name: 42, arguments: {} },
      /^Invalid params for tools\/call: params\.name must be the name of a tool, a string/u,
    ],
    [
      "tools/call with arguments that are a string",
      { name: "echo", arguments: "hi" },
      /^Invalid params for tools\/call: params\.arguments must be an object/u,
    ],
  ] as const) {
    test(`MCP: ${what}`, async () => {
      const method = what.split(" ")[0]!;
      const answer = await rpc("/mcp", { jsonrpc: "2.0", id: 7, method, params }, { "mcp-protocol-version": "2025-06-18" });
      assert.equal(answer.body.id, 7);
      assert.equal(answer.body.error?.code, -32602);
      assert.match(answer.body.error?.message ?? "", expected);
      assert.doesNotMatch(answer.body.error?.message ?? "", /"code":|invalid_type|\[\s*\{/u);
    });
  }

  for (const [method, params] of [
    ["tasks/get", {}],
    ["tasks/get", { id: 5 }],
    ["tasks/cancel", { id: null }],
  ] as const) {
    test(`A2A 0.3: ${method} ${JSON.stringify(params)}`, async () => {
      const answer = await rpc("/a2a/echo", { jsonrpc: "2.0", id: 3, method, params }, { "a2a-version": "0.3" });
      assert.equal(answer.body.error?.code, -32602);
      assert.equal(answer.body.error?.message, "The task id is missing: give the id (a string) of a task this agent started.");
    });
  }
});
