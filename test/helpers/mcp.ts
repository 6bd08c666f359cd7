import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { ChatServe } from "../../src/app/chat-serve.js";
import { loadConfig } from "../../src/config/load-config.js";
import { registryFromConfig } from "../../src/server/from-config.js";
import { REPO_ROOT } from "./cli.js";

export interface McpTestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The questions asked by elicitation, in order. */
  asked: { message: string; requestedSchema: unknown }[];
  /** The `notifications/message` log lines, in order. */
  logs: { level: string; logger?: string; data: unknown }[];
  close: () => Promise<void>;
}

/**
 * The SDK's own client on a chat-serve MCP endpoint. With `elicit`, it declares elicitation
 * and answers each question with what `elicit` returns.
 */
export async function connectMcp(
  url: string,
  options: { elicit?: (message: string) => ElicitResult | Promise<ElicitResult>; headers?: Record<string, string> } = {},
): Promise<McpTestClient> {
  const client = new Client(
    { name: "chat-serve-test", version: "1.0.0" },
    { capabilities: options.elicit === undefined ? {} : { elicitation: {} } },
  );
  const asked: McpTestClient["asked"] = [];
  const logs: McpTestClient["logs"] = [];
  if (options.elicit !== undefined) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      asked.push({ message: params.message, requestedSchema: params.requestedSchema });
      return elicit(params.message);
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(options.headers === undefined ? {} : { requestInit: { headers: options.headers } }),
  });
  await client.connect(transport);
  return { client, transport, asked, logs, close: () => client.close() };
}

/** The text content of a tool's result, joined. */
export function resultText(result: unknown): string {
  return ((result as CallToolResult).content ?? [])
    .filter((part): part is { type: "text"; text: string } => part.type === "text")
    .map((part) => part.text)
    .join("");
}

/** A ChatServe on this repository's own config (the demo models), listening on a free loopback port. */
export async function startDemoServer(bind: { mcp?: boolean | { sessions?: boolean }; a2a?: boolean } = {}) {
  const loaded = await loadConfig({ cwd: REPO_ROOT });
  const registry = await registryFromConfig(loaded);
  const serve = new ChatServe({ graphs: registry, logger: false });
  const app = await serve.bind({ prefix: "/v1", mcp: bind.mcp ?? true, a2a: bind.a2a ?? false });
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });
  return { serve, app, registry, origin, mcpUrl: `${origin}/v1/mcp`, close: () => app.close() };
}
