// The first benchmark: chat-serve's echo model, complete and streaming, against a bare
// fastify route in the same process that calls the same graph directly (the floor).
// Reports ratios to that floor, because absolute numbers on a shared machine are noise.
//
//   npm run bench                     5 s per case, 10 connections
//   BENCH_SECONDS=10 BENCH_CONNECTIONS=32 npm run bench
import autocannon, { type Result } from "autocannon";
import Fastify from "fastify";
import { HumanMessage } from "@langchain/core/messages";
import { ChatServe } from "../src/http/chat-serve.js";
import { GraphRegistry } from "../src/registry/graph-registry.js";
import { graph } from "../demo/graphs/echo.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const prompt = "the quick brown fox jumps over the lazy dog";

async function floorApp() {
  const app = Fastify();
  app.post<{ Body: { text: string } }>("/complete", async (request) => {
    const output = await graph.invoke({ messages: [new HumanMessage(request.body.text)] });
    return { text: output.messages.at(-1)?.text };
  });
  app.post<{ Body: { text: string } }>("/stream", async (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { "content-type": "text/event-stream" });
    const stream = await graph.stream({ messages: [new HumanMessage(request.body.text)] }, { streamMode: "messages" });
    for await (const [chunk] of stream) reply.raw.write(`data: ${JSON.stringify({ text: chunk.text })}\n\n`);
    reply.raw.end("data: [DONE]\n\n");
  });
  return app.listen({ host: "127.0.0.1", port: 0 });
}

async function chatServeApp() {
  const serve = new ChatServe({
    graphs: new GraphRegistry({ echo: { graph, description: "Echo", streamableNodeNames: ["respond"] } }),
  });
  const app = await serve.bind({ prefix: "/v1" });
  return app.listen({ host: "127.0.0.1", port: 0 });
}

async function measure(url: string, body: unknown): Promise<Result> {
  return autocannon({
    url,
    method: "POST",
    connections,
    duration: seconds,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function row(name: string, result: Result, floor?: Result) {
  const ratio = floor === undefined ? "1.00 (floor)" : (result.requests.average / floor.requests.average).toFixed(2);
  return {
    case: name,
    "req/s": Math.round(result.requests.average),
    "p50 ms": result.latency.p50,
    "p99 ms": result.latency.p99,
    errors: result.errors + result.non2xx,
    "throughput vs floor": ratio,
  };
}

const floor = await floorApp();
const served = await chatServeApp();
const chatBody = (stream: boolean) => ({ model: "echo", stream, messages: [{ role: "user", content: prompt }] });

console.log(`chat-serve bench: ${seconds}s per case, ${connections} connections, node ${process.version}`);
const floorComplete = await measure(`${floor}/complete`, { text: prompt });
const serveComplete = await measure(`${served}/v1/chat/completions`, chatBody(false));
const floorStream = await measure(`${floor}/stream`, { text: prompt });
const serveStream = await measure(`${served}/v1/chat/completions`, chatBody(true));
console.table([
  row("floor: graph.invoke on a bare route", floorComplete),
  row("chat-serve: complete", serveComplete, floorComplete),
  row("floor: graph.stream on a bare route", floorStream),
  row("chat-serve: streaming", serveStream, floorStream),
]);
process.exit(0);
