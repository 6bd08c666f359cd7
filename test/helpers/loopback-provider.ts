import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI, type ClientOptions } from "@langchain/openai";
import { withRequestParameters } from "../../src/parameters/with-request-parameters.js";

/** What the loopback provider answers one request with. */
export interface ProviderReply {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

/**
 * A model provider on a loopback port (the stand-in for one we cannot reach): every request's
 * JSON body is recorded, and `reply` says what to answer it with.
 */
export async function startLoopbackProvider(reply: (request: Record<string, unknown>) => ProviderReply) {
  const received: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (data: Buffer) => (body += data.toString()));
    request.on("end", () => {
      const parsed = body === "" ? {} : (JSON.parse(body) as Record<string, unknown>);
      received.push(parsed);
      const { status = 200, headers = {}, body: answer } = reply(parsed);
      response.writeHead(status, { "content-type": "application/json", ...headers }).end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface ChatOpenAIGraphOptions {
  timeout?: number;
  fetch?: ClientOptions["fetch"];
  temperature?: number;
  /** Apply the request's parameters to the model with withRequestParameters. */
  withParameters?: boolean;
}

/** One node that calls a real ChatOpenAI at `baseURL`, as a graph author would write it. */
export function chatOpenAIGraph(baseURL: string, options: ChatOpenAIGraphOptions = {}) {
  const model = new ChatOpenAI({
    model: "gpt-test",
    apiKey: "sk-test-secret-1234",
    maxRetries: 0,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    configuration: { baseURL, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) },
  });
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async (state, config) => ({
      messages: [await (options.withParameters ? withRequestParameters(model, config) : model).invoke(state.messages, config)],
    }))
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}
