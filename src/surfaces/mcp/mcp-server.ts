import { createRequire } from "node:module";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { RESUME_TOOL } from "../../dialects/mcp/tool-names.js";
import { type McpTool, RESUME_TOOL_DEFINITION } from "../../dialects/mcp/tool-schemas.js";
import type { Caller } from "../../http/auth.js";
import type { RunRouteOptions } from "../../http/run-request.js";
import { GraphFeature } from "../../registry/features.js";
import { type CarriedBy, callModelTool, callResumeTool } from "./mcp-call.js";

const { version } = createRequire(import.meta.url)("../../../package.json") as { version: string };

/** What every MCP server of a mount shares. */
export interface McpServerContext {
  options: RunRouteOptions;
  /** Each model's tool and its definition, by tool name: made once, at start-up. */
  tools: ReadonlyMap<string, { model: string; tool: McpTool }>;
  /** How long a question asked by elicitation waits for its answer. */
  elicitationTimeoutMs: number;
}

/** The HTTP request a message came on, which the route hands over as the message's auth info. */
function carrierOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): CarriedBy {
  const carrier = extra.authInfo?.extra?.carrier as CarriedBy | undefined;
  if (carrier === undefined) throw new McpError(ErrorCode.InternalError, "The request reached the MCP server without its HTTP request.");
  return carrier;
}

/** The tools a caller sees: the models its key allows, in registry order. */
function visibleTools(context: McpServerContext, caller: Caller | undefined): { model: string; tool: McpTool }[] {
  return [...context.tools.values()].filter(({ model }) => caller?.models === undefined || caller.models.has(model));
}

const LEVELS = LoggingLevelSchema.options;

/**
 * An MCP server over the mount's models: one tool per model, and `resume` when a model can
 * pause. One per session (or per request, without sessions).
 */
export function createMcpServer(context: McpServerContext): Server {
  const { registry } = context.options;
  const server = new Server(
    { name: "chat-serve", title: "chat-serve", version },
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions:
        "Each tool runs one model (a LangGraph graph) on your message. A run may pause to ask a question: it is asked through elicitation when the client supports it, and otherwise returned with status 'interrupted', to be answered with the resume tool.",
    },
  );
  // The session's log level: status and progress lines are `info`.
  let level: LoggingLevel = "debug";
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    level = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    if (request.params?.cursor !== undefined) {
      throw new McpError(ErrorCode.InvalidParams, "Every tool is on the first page; there is no cursor to continue from.");
    }
    const visible = visibleTools(context, carrierOf(extra).request.chatServeCaller);
    const tools = visible.map(({ tool }) => tool);
    const pauses = visible.some(({ model }) => registry.getGraph(model).features.has(GraphFeature.INTERRUPTS));
    return { tools: pauses ? [...tools, RESUME_TOOL_DEFINITION] : tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const carrier = carrierOf(extra);
    const visible = new Map(visibleTools(context, carrier.request.chatServeCaller).map((entry) => [entry.tool.name, entry]));
    const { name } = request.params;
    const base = {
      options: context.options,
      carrier,
      extra,
      canElicit: server.getClientCapabilities()?.elicitation !== undefined,
      elicitationTimeoutMs: context.elicitationTimeoutMs,
      logs: LEVELS.indexOf(level) <= LEVELS.indexOf("info"),
    };
    if (name === RESUME_TOOL) {
      const models = new Map([...visible].map(([tool, entry]) => [tool, entry.model]));
      return callResumeTool(base, models, request.params.arguments);
    }
    const entry = visible.get(name);
    if (entry === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. tools/list gives the tools here.`);
    }
    return callModelTool({ ...base, tool: name, model: entry.model }, entry.tool, request.params.arguments);
  });
  return server;
}
