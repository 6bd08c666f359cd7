import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { REPO_ROOT, type RunningServer, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";

const run = promisify(execFile);

/**
 * What the model reads of a tool's result: the adapters hand a result with one text block
 * and structuredContent over as that block, as JSON (text, structuredContent), to the model.
 */
function toolText(message: ToolMessage): string {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const block = JSON.parse(content) as { text?: string; structuredContent?: { text?: string } };
  return block.text ?? "";
}

/** The MCP Inspector's command-line mode, as a user runs it: `npx @modelcontextprotocol/inspector --cli <url> …`. */
async function inspector(url: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run("npx", ["--no-install", "@modelcontextprotocol/inspector", "--cli", url, "--transport", "http", ...args], {
    cwd: REPO_ROOT,
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("MCP clients no one here wrote, on `chat-serve start` of the demo config", () => {
  let server: RunningServer;
  let url: string;
  before(async () => {
    server = await startCli([]);
    url = `${server.baseURL}/mcp`;
  });
  after(async () => {
    await server.stop();
  });

  test("the banner names the MCP endpoint", async () => {
    const line = new RegExp(`mcp\\s+${url.replaceAll(".", "\\.")}\\s+\\(Streamable HTTP\\)`, "u");
    await eventually(async () => assert.match(server.output(), line), 5_000);
  });

  test("the MCP Inspector's CLI lists the tools and calls echo and research", async () => {
    const listed = (await inspector(url, ["--method", "tools/list"])) as { tools: { name: string }[] };
    assert.deepEqual(
      listed.tools.map((tool) => tool.name),
      ["echo", "plain", "research", "approval", "tools", "think", "memory", "research-deep", "resume"],
    );
    const echoed = (await inspector(url, [
      "--method",
      "tools/call",
      "--tool-name",
      "echo",
      "--tool-arg",
      "message=from the inspector",
    ])) as {
      content: { text: string }[];
    };
    assert.equal(echoed.content[0]?.text, "from the inspector");
    const research = (await inspector(url, [
      "--method",
      "tools/call",
      "--tool-name",
      "research",
      "--tool-arg",
      "message=volcanoes",
      "--tool-arg",
      'settings={"depth":1,"audience":"child"}',
    ])) as { structuredContent: { text: string; citations: unknown[] } };
    assert.equal(research.structuredContent.text, "I looked at 1 source about volcanoes and explain it simply enough for a child.");
    assert.equal(research.structuredContent.citations.length, 1);
  });

  test("LangChain's MCP adapters load the tools into a LangGraph agent: a graph calls a graph", async () => {
    const client = new MultiServerMCPClient({ mcpServers: { demo: { url, transport: "http" } }, useStandardContentBlocks: true });
    try {
      const tools = await client.getTools();
      const echo = tools.find((tool) => tool.name === "echo");
      assert.ok(echo, "the echo tool is loaded");
      // An agent whose (scripted) model asks for the echo tool, then answers with what it said.
      const model = new ScriptedChatModel({
        respond: (messages: BaseMessage[]) => {
          const last = messages.at(-1);
          if (last instanceof ToolMessage) return `The echo graph said: ${toolText(last)}`;
          return { text: "", toolCalls: [{ name: "echo", args: { message: "a graph calling a graph" } }] };
        },
      }).bindTools(tools);
      const agent = new StateGraph(MessagesAnnotation)
        .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
        .addNode("tools", new ToolNode(tools))
        .addEdge(START, "agent")
        .addConditionalEdges("agent", (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END))
        .addEdge("tools", "agent")
        .compile();
      const result = await agent.invoke({ messages: [{ role: "user", content: "use the echo tool" }] });
      assert.equal(result.messages.at(-1)?.text, "The echo graph said: a graph calling a graph");
      const toolMessage = result.messages.find((message): message is ToolMessage => message instanceof ToolMessage);
      assert.equal(
        JSON.parse(String(toolMessage?.content)).structuredContent.status,
        "completed",
        "the structured result reaches the agent too",
      );
    } finally {
      await client.close();
    }
  });
});
