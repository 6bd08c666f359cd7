import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { eventually } from "../helpers/eventually.js";
import { connectMcp, resultText, startDemoServer } from "../helpers/mcp.js";
import { startTestServer } from "../helpers/server.js";

type Structured = Record<string, unknown> & { interrupt?: { tool: string; run_id: string; state_token: string; questions: unknown[] } };
const structured = (result: unknown) => (result as CallToolResult).structuredContent as Structured;

describe("MCP: the demo models as tools (the SDK's own client)", () => {
  let server: Awaited<ReturnType<typeof startDemoServer>>;
  before(async () => {
    server = await startDemoServer();
  });
  after(async () => server.close());

  test("tools/list gives one tool per model, with its description, input and output schemas, and the resume tool", async () => {
    const { client, close } = await connectMcp(server.mcpUrl);
    const { tools } = await client.listTools();
    await close();
    const models = server.registry.getGraphNames();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      [...models.map((model) => model.replace(/[^A-Za-z0-9_-]/gu, "_")), "resume"],
    );
    const research = tools.find((tool) => tool.name === "research")!;
    assert.equal(research.description, server.registry.getGraph("research").description);
    assert.deepEqual(research.inputSchema.required, ["message"]);
    const settings = research.inputSchema.properties?.settings as { properties: Record<string, { maximum?: number }> };
    assert.equal(settings.properties.depth?.maximum, 5, "the model's client settings are the settings argument");
    assert.ok(research.inputSchema.properties?.conversation, "a conversation may be continued");
    assert.equal(
      (tools.find((tool) => tool.name === "echo")!.inputSchema.properties as object as Record<string, unknown>).settings,
      undefined,
    );
    for (const tool of tools) assert.ok(tool.outputSchema, `${tool.name} declares its structuredContent`);
  });

  test("echo answers with its text, and the usage in structuredContent", async () => {
    const { client, close } = await connectMcp(server.mcpUrl);
    const result = await client.callTool({ name: "echo", arguments: { message: "hello over MCP" } });
    await close();
    assert.equal(resultText(result), "hello over MCP");
    assert.equal(result.isError, undefined);
    const content = structured(result);
    assert.equal(content.status, "completed");
    assert.deepEqual(content.usage, { input_tokens: 3, output_tokens: 3, total_tokens: 6 });
  });

  test("research with settings: progress notifications and log lines in order, citations and artifacts as resource links", async () => {
    const { client, logs, close } = await connectMcp(server.mcpUrl);
    const progress: { progress: number; message?: string }[] = [];
    const result = await client.callTool(
      { name: "research", arguments: { message: "tides?", settings: { depth: 3, audience: "expert" } } },
      undefined,
      {
        onprogress: (update) => progress.push(update),
      },
    );
    await close();
    assert.equal(resultText(result), "I looked at 3 sources about tides and explain it with the technical detail an expert expects.");
    const said = [
      "Searching 3 sources",
      "Read source 1 (1/3)",
      "Read source 2 (2/3)",
      "Read source 3 (3/3)",
      "Writing the answer",
      "Research complete",
    ];
    assert.deepEqual(
      progress.map((update) => update.message),
      said,
    );
    assert.deepEqual(
      progress.map((update) => update.progress),
      [1, 2, 3, 4, 5, 6],
      "progress only increases",
    );
    const lines = logs.map((log) => (log.data as { message: string }).message);
    assert.deepEqual(
      lines.filter((line) => !line.startsWith("Made")),
      said,
    );
    assert.ok(lines.includes("Made Notes on tides: https://example.com/notes/1"));
    assert.ok(logs.every((log) => log.level === "info" && log.logger === "research"));
    const links = (result.content as { type: string; uri?: string }[])
      .filter((part) => part.type === "resource_link")
      .map((part) => part.uri);
    assert.deepEqual(links, ["https://example.com/sources", "https://example.com/notes/1"]);
    assert.deepEqual(structured(result).citations, [
      { url: "https://example.com/sources", title: "Sources consulted", start_index: 12, end_index: 20 },
    ]);
  });

  test("a preset runs with its settings", async () => {
    const { client, close } = await connectMcp(server.mcpUrl);
    const result = await client.callTool({ name: "research-deep", arguments: { message: "stars" } });
    await close();
    assert.match(resultText(result), /^I looked at 5 sources about stars/u);
  });

  test("settings the model refuses are the tool's error, naming the field", async () => {
    const { client, close } = await connectMcp(server.mcpUrl);
    const result = await client.callTool({ name: "research", arguments: { message: "x", settings: { depth: 9 } } });
    await close();
    assert.equal(result.isError, true);
    assert.match(resultText(result), /depth/u);
    assert.deepEqual(structured(result).error, {
      message: resultText(result),
      type: "invalid_request_error",
      code: "invalid_client_settings",
      param: "settings",
    });
  });

  test("approval asks through elicitation (options as an enum) and goes on with the answer, in the same call", async () => {
    const { client, asked, close } = await connectMcp(server.mcpUrl, {
      elicit: () => ({ action: "accept", content: { answer: "approve" } }),
    });
    const result = await client.callTool({ name: "approval", arguments: { message: "deploy" } });
    await close();
    assert.equal(resultText(result), "Approved: going ahead with deploy.");
    assert.deepEqual(asked, [
      {
        message: "May I go ahead with: deploy?",
        requestedSchema: {
          type: "object",
          properties: { answer: { type: "string", title: "Answer", description: "Choose one.", enum: ["approve", "reject"] } },
          required: ["answer"],
        },
      },
    ]);
    assert.equal(await server.registry.pendingRuns.count(), 0, "the finished run left no pending checkpoint");
  });

  test("declining the question ends the run: nothing is left pending", async () => {
    const { client, close } = await connectMcp(server.mcpUrl, { elicit: () => ({ action: "decline" }) });
    const result = await client.callTool({ name: "approval", arguments: { message: "delete everything" } });
    await close();
    assert.match(resultText(result), /declined/u);
    assert.equal(result.isError, undefined);
    assert.equal(await server.registry.pendingRuns.count(), 0);
  });

  test("cancelling the question leaves the run paused, for the resume tool", async () => {
    const { client, close } = await connectMcp(server.mcpUrl, { elicit: () => ({ action: "cancel" }) });
    const paused = await client.callTool({ name: "approval", arguments: { message: "ship it" } });
    const interrupt = structured(paused).interrupt!;
    assert.equal(structured(paused).status, "interrupted");
    assert.equal(await server.registry.pendingRuns.count(), 1);
    const resumed = await client.callTool({
      name: "resume",
      arguments: { tool: interrupt.tool, run_id: interrupt.run_id, state_token: interrupt.state_token, answer: "approve" },
    });
    await close();
    assert.equal(resultText(resumed), "Approved: going ahead with ship it.");
    assert.equal(await server.registry.pendingRuns.count(), 0);
  });

  test("without elicitation, the question is the result and the resume tool answers it; a stale answer is refused", async () => {
    const { client, close } = await connectMcp(server.mcpUrl);
    const paused = await client.callTool({ name: "approval", arguments: { message: "restart" } });
    assert.match(resultText(paused), /May I go ahead with: restart\? \(approve \/ reject\)/u);
    assert.match(resultText(paused), /call the resume tool/u);
    const interrupt = structured(paused).interrupt!;
    assert.deepEqual(interrupt.questions, [
      {
        question: "May I go ahead with: restart?",
        options: ["approve", "reject"],
        payload: { question: "May I go ahead with: restart?", options: ["approve", "reject"] },
      },
    ]);
    const args = { tool: "approval", run_id: interrupt.run_id, state_token: interrupt.state_token };
    const wrongToken = await client.callTool({ name: "resume", arguments: { ...args, state_token: "0".repeat(32), answer: "approve" } });
    assert.equal(wrongToken.isError, true, "a state token of another batch is refused");
    const resumed = await client.callTool({ name: "resume", arguments: { ...args, answer: "no" } });
    assert.equal(resultText(resumed), 'Not approved (you said "no"): I will not do restart.');
    const again = await client.callTool({ name: "resume", arguments: { ...args, answer: "approve" } });
    await close();
    assert.equal(again.isError, true, "a finished run cannot be answered again");
    assert.equal(structured(again).status, "failed");
  });

  test("tools: the tool call the graph asks its caller to make is in structuredContent", async () => {
    const { client, close } = await connectMcp(server.mcpUrl);
    const result = await client.callTool({ name: "tools", arguments: { message: "What is the weather in Rome?" } });
    await close();
    assert.deepEqual(structured(result).tool_calls, [{ name: "get_weather", arguments: { city: "Rome" } }]);
    assert.match(resultText(result), /get_weather/u);
  });

  test("memory: calls that name a conversation continue it", async () => {
    const conversation = (await (
      await fetch(`${server.origin}/v1/conversations`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    ).json()) as {
      id: string;
    };
    const { client, close } = await connectMcp(server.mcpUrl);
    await client.callTool({ name: "memory", arguments: { message: "my name is Ada", conversation: conversation.id } });
    const second = await client.callTool({ name: "memory", arguments: { message: "what is my name?", conversation: conversation.id } });
    await close();
    assert.equal(resultText(second), 'You said "what is my name?". Before that you said: "my name is Ada".');
    const items = (await (await fetch(`${server.origin}/v1/conversations/${conversation.id}/items`)).json()) as { data: unknown[] };
    assert.equal(items.data.length, 4, "both turns were added to the conversation");
  });
});

describe("MCP: cancellation stops the graph", () => {
  let ticks = 0;
  const slow = new StateGraph(MessagesAnnotation)
    .addNode("work", async (_state, config) => {
      for (let step = 0; step < 100; step += 1) {
        await sleep(20, undefined, { signal: config.signal });
        ticks += 1;
      }
      return { messages: [new AIMessage("finished")] };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile();
  let server: Awaited<ReturnType<typeof startTestServer>>;
  before(async () => {
    server = await startTestServer({ slow: { graph: slow, description: "Works for two seconds." } }, { logger: false, mcp: true });
  });
  after(async () => server.close());

  for (const how of ["notifications/cancelled", "a closed connection"] as const) {
    test(`${how} aborts the run and releases it`, async () => {
      ticks = 0;
      const { client, transport, close } = await connectMcp(`${server.baseURL}/mcp`);
      const controller = new AbortController();
      const call = client.callTool({ name: "slow", arguments: { message: "go" } }, undefined, { signal: controller.signal });
      await eventually(async () => assert.ok(ticks >= 3, "the graph is working"), 5_000);
      if (how === "notifications/cancelled") controller.abort();
      else await transport.close();
      await assert.rejects(call);
      await eventually(async () => assert.equal(server.serve.activeRuns, 0, "the run was released"), 5_000);
      const stopped = ticks;
      await sleep(150);
      assert.equal(ticks, stopped, "the graph does no more work");
      assert.ok(ticks < 100);
      await close();
    });
  }
});
