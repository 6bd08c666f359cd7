import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { graph as approvalGraph } from "../../demo/graphs/approval.js";
import { graph as echoGraph } from "../../demo/graphs/echo.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { McpSessions } from "../../src/surfaces/mcp/mcp-sessions.js";
import { eventually } from "../helpers/eventually.js";
import { trackLiveResources } from "../helpers/live-handles.js";
import { connectMcp, resultText } from "../helpers/mcp.js";
import { startTestServer } from "../helpers/server.js";

const ACCEPT = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

let runs = 0;
const counted = new StateGraph(MessagesAnnotation)
  .addNode("answer", async () => {
    runs += 1;
    return { messages: [new AIMessage("counted")] };
  })
  .addEdge(START, "answer")
  .addEdge("answer", END)
  .compile();

const backends = () => ({ runCoordinator: new InMemoryRunCoordinator(), checkpointer: new MemorySaver() });
const graphs = () => ({
  echo: { graph: echoGraph, description: "Echo.", streamableNodeNames: ["respond"] },
  counted: { graph: counted, description: "Counts its runs." },
  approval: { graph: approvalGraph, description: "Asks first.", features: ["INTERRUPTS" as const] },
});

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: "POST", headers: { ...ACCEPT, ...headers }, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Opens a session by hand, as curl would. */
async function initialize(url: string, headers: Record<string, string> = {}) {
  const response = await post(url, JSON.stringify(INITIALIZE), headers);
  assert.equal(response.status, 200, response.text);
  return response.headers.get("mcp-session-id");
}

describe("MCP: bad input is answered as the protocol says, never a 500", () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let url: string;
  before(async () => {
    server = await startTestServer(graphs(), { logger: false, mcp: true }, backends());
    url = `${server.baseURL}/mcp`;
  });
  after(async () => server.close());

  test("malformed JSON is a parse error; a body that is no JSON-RPC message is refused", async () => {
    const broken = await post(url, '{"jsonrpc": "2.0",');
    assert.equal(broken.status, 400);
    assert.deepEqual(JSON.parse(broken.text), {
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error: the body is not valid JSON." },
      id: null,
    });
    const session = await initialize(url);
    const notRpc = await post(url, JSON.stringify({ hello: "world" }), { "mcp-session-id": session! });
    assert.equal(notRpc.status, 400);
    assert.equal(JSON.parse(notRpc.text).error.code, -32700);
  });

  test("a wrong protocol version header, a missing or unknown session, a wrong content type", async () => {
    const session = (await initialize(url))!;
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const version = await post(url, list, { "mcp-session-id": session, "mcp-protocol-version": "1999-01-01" });
    assert.equal(version.status, 400);
    assert.match(JSON.parse(version.text).error.message, /Unsupported protocol version: 1999-01-01/u);
    const missing = await post(url, list);
    assert.equal(missing.status, 400);
    assert.match(JSON.parse(missing.text).error.message, /Mcp-Session-Id/u);
    const unknown = await post(url, list, { "mcp-session-id": "no-such-session" });
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.text).error.code, -32001);
    const text = await post(url, list, { "mcp-session-id": session, "content-type": "text/plain" });
    assert.equal(text.status, 415);
    const method = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "no/such/method" }), { "mcp-session-id": session });
    assert.match(method.text, /"code":-32601/u, "an unknown method is method-not-found");
  });

  test("an unknown tool is a protocol error; arguments that fail the schema are the tool's error, naming the field", async () => {
    const { client, close } = await connectMcp(url);
    await assert.rejects(client.callTool({ name: "nope", arguments: { message: "x" } }), (error: unknown) => {
      assert.ok(error instanceof McpError, "an McpError");
      assert.equal(error.code, -32602);
      return true;
    });
    const missing = await client.callTool({ name: "echo", arguments: {} });
    assert.equal(missing.isError, true);
    assert.equal(resultText(missing), "The argument 'message' is required.");
    const extra = await client.callTool({ name: "echo", arguments: { message: "x", temperature: 2 } });
    assert.match(resultText(extra), /Unknown argument 'temperature'/u);
    const wrongType = await client.callTool({ name: "echo", arguments: { message: 42 } });
    assert.match(resultText(wrongType), /'message' must be a non-empty string/u);
    const resume = await client.callTool({
      name: "resume",
      arguments: { tool: "approval", run_id: "nonsense", state_token: "x", answer: "y" },
    });
    assert.equal(resume.isError, true);
    await close();
  });

  test("GET opens the session's stream, DELETE ends the session", async () => {
    const session = (await initialize(url))!;
    const controller = new AbortController();
    // The stream's headers leave at once, before any event (a client waits for them).
    const timeout = setTimeout(() => controller.abort(new Error("the GET stream's headers did not arrive")), 5_000);
    const stream = await fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": session }, signal: controller.signal });
    clearTimeout(timeout);
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get("content-type") ?? "", /text\/event-stream/u);
    controller.abort();
    const deleted = await fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } });
    assert.equal(deleted.status, 200);
    const after = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), { "mcp-session-id": session });
    assert.equal(after.status, 404);
  });

  test("pages from another origin are refused; a loopback page is let in", async () => {
    const refused = await post(url, JSON.stringify(INITIALIZE), { origin: "http://evil.example" });
    assert.equal(refused.status, 403);
    assert.match(JSON.parse(refused.text).error.message, /http:\/\/evil\.example may not call this MCP server/u);
    assert.ok(await initialize(url, { origin: "http://localhost:6274" }));
  });

  test("on a loopback server, a request for another host name is refused (DNS rebinding)", async () => {
    const local = await startTestServer(graphs(), { logger: false, mcp: { loopbackOnly: true } }, backends());
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // fetch will not send a Host header of our choosing; node:http will.
      const request = httpRequest(
        `${local.baseURL}/mcp`,
        { method: "POST", headers: { ...ACCEPT, host: "attacker.example:8000" } },
        (response) => {
          let body = "";
          response.on("data", (chunk: Buffer) => (body += chunk.toString()));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on("error", reject);
      request.end(JSON.stringify(INITIALIZE));
    });
    const allowed = await initialize(`${local.baseURL}/mcp`);
    await local.close();
    assert.equal(rebound.status, 403);
    assert.match(JSON.parse(rebound.body).error.message, /answers only requests for localhost, not for attacker\.example:8000/u);
    assert.ok(allowed, "127.0.0.1 is a loopback host");
  });

  test("a draining server refuses new calls with 503 and Retry-After", async () => {
    const drained = await startTestServer(graphs(), { logger: false, mcp: true }, backends());
    const session = (await initialize(`${drained.baseURL}/mcp`))!;
    drained.serve.drain();
    const call = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { message: "x" } } });
    const refused = await post(`${drained.baseURL}/mcp`, call, { "mcp-session-id": session });
    await drained.close();
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
  });
});

describe("MCP: authentication and isolation", () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let url: string;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const [ACME, GLOBEX, ECHO_ONLY] = ["sk-acme-0123456789abcdef", "sk-globex-0123456789abcd", "sk-echo-0123456789abcdefg"];
  before(async () => {
    server = await startTestServer(
      graphs(),
      {
        logger: false,
        mcp: true,
        auth: {
          keys: [
            { key: ACME, tenant: "acme" },
            { key: GLOBEX, tenant: "globex" },
            { key: ECHO_ONLY, tenant: "acme", models: ["echo"] },
          ],
        },
      },
      backends(),
    );
    url = `${server.baseURL}/mcp`;
  });
  after(async () => server.close());

  test("a wrong key is refused before any graph runs", async () => {
    runs = 0;
    const call = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "counted", arguments: { message: "x" } } });
    const refused = await post(url, call, bearer("sk-wrong-0123456789abcdef"));
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("www-authenticate"), 'Bearer realm="chat-serve"');
    await assert.rejects(connectMcp(url, { headers: bearer("sk-wrong-0123456789abcdef") }));
    assert.equal(runs, 0);
  });

  test("a key limited to some models lists and calls only their tools", async () => {
    const { client, close } = await connectMcp(url, { headers: bearer(ECHO_ONLY) });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ["echo"],
    );
    await assert.rejects(client.callTool({ name: "counted", arguments: { message: "x" } }), /Unknown tool: counted/u);
    await close();
  });

  test("one tenant cannot use another's session, nor answer its paused run", async () => {
    const session = (await initialize(url, bearer(ACME)))!;
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    assert.equal((await post(url, list, { ...bearer(GLOBEX), "mcp-session-id": session })).status, 404);
    const acme = await connectMcp(url, { headers: bearer(ACME) });
    const paused = await acme.client.callTool({ name: "approval", arguments: { message: "pay" } });
    const interrupt = (paused.structuredContent as { interrupt: { run_id: string; state_token: string } }).interrupt;
    const globex = await connectMcp(url, { headers: bearer(GLOBEX) });
    const stolen = await globex.client.callTool({
      name: "resume",
      arguments: { tool: "approval", run_id: interrupt.run_id, state_token: interrupt.state_token, answer: "approve" },
    });
    assert.equal(stolen.isError, true, "globex cannot resume acme's run");
    const own = await acme.client.callTool({
      name: "resume",
      arguments: { tool: "approval", run_id: interrupt.run_id, state_token: interrupt.state_token, answer: "approve" },
    });
    assert.equal(resultText(own), "Approved: going ahead with pay.");
    await Promise.all([acme.close(), globex.close()]);
  });
});

describe("MCP: limits and unanswered questions", () => {
  test("a rate limit reached is the tool's error, with the OpenAI message", async () => {
    const server = await startTestServer(graphs(), { logger: false, mcp: true, limits: { requestsPerMinute: 1 } }, backends());
    const { client, close } = await connectMcp(`${server.baseURL}/mcp`);
    assert.equal(resultText(await client.callTool({ name: "echo", arguments: { message: "one" } })), "one");
    const limited = await client.callTool({ name: "echo", arguments: { message: "two" } });
    await close();
    await server.close();
    assert.equal(limited.isError, true);
    assert.match(resultText(limited), /^Rate limit reached for requests: 1 per minute/u);
    assert.equal((limited.structuredContent as { error: { code: string } }).error.code, "rate_limit_exceeded");
  });

  test("a question not answered in time leaves the run paused, returned for the resume tool", async () => {
    const server = await startTestServer(graphs(), { logger: false, mcp: { elicitationTimeoutMs: 200 } }, backends());
    const { client, asked, close } = await connectMcp(`${server.baseURL}/mcp`, {
      elicit: () => new Promise((resolve) => setTimeout(() => resolve({ action: "accept", content: { answer: "approve" } }), 1_000)),
    });
    const paused = await client.callTool({ name: "approval", arguments: { message: "wait" } });
    assert.equal(asked.length, 1);
    const interrupt = (paused.structuredContent as { interrupt: { run_id: string; state_token: string } }).interrupt;
    assert.equal((paused.structuredContent as { status: string }).status, "interrupted");
    const resumed = await client.callTool({
      name: "resume",
      arguments: { tool: "approval", run_id: interrupt.run_id, state_token: interrupt.state_token, answer: "approve" },
    });
    await close();
    await server.close();
    assert.equal(resultText(resumed), "Approved: going ahead with wait.");
  });
});

describe("MCP: sessions, stateless mode and what is left", () => {
  test("a client that leaves while its question waits ends the wait (no timer is left for it)", async () => {
    const server = await startTestServer(graphs(), { logger: false, mcp: true }, backends());
    // The server's timers (the MCP SDK's and chat-serve's), not those of the test's own client and fetch.
    const timers = trackLiveResources(["Timeout"], { createdBy: /modelcontextprotocol\/sdk\/(dist|src)\/server|\/src\/http\// });
    const { client, transport, asked } = await connectMcp(`${server.baseURL}/mcp`, { elicit: () => new Promise(() => {}) });
    const call = client.callTool({ name: "approval", arguments: { message: "never answered" } }).catch(() => "gone");
    await eventually(async () => assert.equal(asked.length, 1, "the question was asked"), 5_000);
    await transport.close();
    assert.equal(await call, "gone");
    // The question's 10-minute wait (the SDK aborts it when its stream closes) and the session's stream end with the connection.
    await eventually(async () => assert.equal(timers.count(), 0, `${timers.count()} timers left`), 5_000);
    timers.stop();
    assert.equal(await server.serve.registry.pendingRuns.count(), 1, "the run stays paused, to be answered with resume");
    await server.close();
  });

  test("without sessions: no session id, no elicitation (the resume tool answers), GET is 405", async () => {
    const server = await startTestServer(graphs(), { logger: false, mcp: { sessions: false } }, backends());
    const url = `${server.baseURL}/mcp`;
    assert.equal(await initialize(url), null, "no Mcp-Session-Id header");
    const { client, asked, close } = await connectMcp(url, { elicit: () => ({ action: "accept", content: { answer: "approve" } }) });
    const paused = await client.callTool({ name: "approval", arguments: { message: "scale up" } });
    assert.equal(asked.length, 0, "a request standing alone cannot be answered by another");
    const interrupt = (paused.structuredContent as { interrupt: { run_id: string; state_token: string } }).interrupt;
    const resumed = await client.callTool({
      name: "resume",
      arguments: { tool: "approval", run_id: interrupt.run_id, state_token: interrupt.state_token, answer: "approve" },
    });
    assert.equal(resultText(resumed), "Approved: going ahead with scale up.");
    const get = await fetch(url, { headers: { accept: "text/event-stream" } });
    assert.equal(get.status, 405);
    await close();
    await server.close();
  });

  test("the route's module loads after the first answer, even of a server closed at once, and leaves no sweep timer", async () => {
    const sweeps = trackLiveResources(["Timeout"], { createdBy: /mcp-sessions/u });
    const server = await startTestServer(graphs(), { logger: false, mcp: true }, backends());
    assert.equal(sweeps.created(), 0, "nothing of MCP's sessions is made at start");
    // Not an MCP request: the server loads its surfaces' modules once it has answered its first.
    assert.equal((await fetch(`${server.baseURL}/models`)).status, 200);
    await server.close();
    await eventually(async () => assert.equal(sweeps.created(), 1, "the warm-up made the sessions' sweep"), 5_000);
    await eventually(async () => assert.equal(sweeps.count(), 0, "the sweep's timer ended with the server"), 5_000);
    sweeps.stop();
  });

  test("an idle session is closed by the sweep; close() ends every session and the sweep's timer", async () => {
    const timers = trackLiveResources(["Timeout"]);
    const server = await startTestServer(graphs(), { logger: false, mcp: true }, backends());
    const url = `${server.baseURL}/mcp`;
    const clients = [];
    for (let index = 0; index < 10; index += 1) {
      const client = await connectMcp(url);
      assert.equal(resultText(await client.client.callTool({ name: "echo", arguments: { message: `call ${index}` } })), `call ${index}`);
      clients.push(client);
    }
    await clients[0]!.transport.close();
    // Nine clients still connected when the server stops: their sessions (and GET streams) end too.
    await server.close();
    await Promise.all(clients.map((client) => client.close()));
    // The poll's own sleep may be counted; a timer left per session would be nine or more.
    await eventually(async () => assert.ok(timers.count() <= 1, `${timers.count()} timers outlive the server`), 5_000);
    timers.stop();
    const sessions = new McpSessions(10, 5);
    const closed: string[] = [];
    const fake = (id: string, open: number) => ({
      id,
      owner: "",
      tenant: "",
      open,
      lastSeen: 0,
      transport: {} as never,
      server: { close: async () => void closed.push(id) } as never,
    });
    await sessions.add(fake("idle", 0));
    await sessions.add(fake("busy", 1));
    await sessions.sweep(Date.now());
    assert.deepEqual(closed, ["idle"]);
    assert.equal(sessions.size, 1);
    await sessions.close();
    assert.deepEqual(closed, ["idle", "busy"]);
  });

  test("one tenant's sessions never end another's: each tenant is capped, and a full process makes room in the largest", async () => {
    const sessions = new McpSessions(60_000, 6, 3);
    const closed: string[] = [];
    let clock = 0;
    const session = (id: string, tenant: string) => {
      clock += 1;
      return {
        id,
        owner: tenant,
        tenant,
        open: 0,
        lastSeen: clock,
        transport: {} as never,
        server: { close: async () => void closed.push(id) } as never,
      };
    };
    assert.equal(await sessions.add(session("a1", "A")), true);
    // Tenant B opens 1,000 sessions: each past its cap of 3 ends one of B's own.
    for (let index = 0; index < 1_000; index += 1) assert.equal(await sessions.add(session(`b${index}`, "B")), true);
    assert.ok(sessions.get("a1"), "tenant A's session is still there");
    assert.ok(!closed.includes("a1"));
    assert.equal(sessions.size, 4);
    // The process fills up (6): room is made in the tenant that holds the most (B), not A.
    await sessions.add(session("c1", "C"));
    await sessions.add(session("c2", "C"));
    await sessions.add(session("d1", "D"));
    assert.ok(sessions.get("a1"));
    assert.equal(sessions.size, 6);
    // A tenant whose sessions are all in use is refused a new one rather than ending anyone's.
    const busy = new McpSessions(60_000, 10, 1);
    assert.equal(await busy.add({ ...session("x1", "X"), open: 1 }), true);
    assert.equal(await busy.add(session("x2", "X")), false);
    await sessions.close();
    await busy.close();
  });

  test("every valid model ID is a tool: too long, 'resume', or a name taken gets a hashed name that fits and can be called", async () => {
    const long = `research.${"x".repeat(141)}`;
    const server = await startTestServer(
      {
        a_b: { graph: counted, description: "x" },
        "a.b": { graph: counted, description: "y" },
        resume: { graph: counted, description: "z" },
        [long]: { graph: counted, description: "long" },
      },
      { mcp: true, logger: false },
    );
    const mcp = await connectMcp(`${server.baseURL}/mcp`);
    try {
      const { tools } = await mcp.client.listTools();
      const byTitle = Object.fromEntries(tools.map((tool) => [tool.title, tool.name]));
      assert.equal(byTitle.a_b, "a_b");
      assert.match(byTitle["a.b"]!, /^a_b_[0-9a-f]{8}$/u);
      assert.match(byTitle.resume!, /^resume_[0-9a-f]{8}$/u);
      assert.equal(byTitle[long]!.length, 128);
      assert.match(byTitle[long]!, /^research_x+_[0-9a-f]{8}$/u);
      const result = await mcp.client.callTool({ name: byTitle[long]!, arguments: { message: "hi" } });
      assert.equal(resultText(result), "counted");
    } finally {
      await mcp.close();
      await server.close();
    }
  });
});
