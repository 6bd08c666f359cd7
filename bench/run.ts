// The first benchmark: chat-serve's echo model, complete and streaming, against a bare
// fastify route in the same process that calls the same graph directly (the floor).
// Reports ratios to that floor, because absolute numbers on a shared machine are noise.
//
// The machine is shared and noisy, so each case runs in several short rounds that alternate
// with its floor, and the ratio reported is the median of the per-round ratios.
//
//   npm run bench                     5 rounds of 2 s per side, 10 connections
//   BENCH_ROUNDS=9 BENCH_SECONDS=3 BENCH_CONNECTIONS=32 npm run bench

import { HumanMessage } from "@langchain/core/messages";
import autocannon, { type Result } from "autocannon";
import Fastify from "fastify";
import { graph } from "../demo/graphs/echo.js";
import { ChatServe } from "../src/http/chat-serve.js";
import { GraphRegistry } from "../src/registry/graph-registry.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
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

const BENCH_KEY = "sk-bench-0123456789abcdef";

/** chat-serve as is, or with API keys, rate limits (never reached) and metrics all on. */
async function chatServeApp(production = false) {
  const serve = new ChatServe({
    graphs: new GraphRegistry({ echo: { graph, description: "Echo", streamableNodeNames: ["respond"] } }),
    ...(production
      ? {
          auth: { keys: [{ tenant: "bench", key: BENCH_KEY }] },
          limits: { requestsPerMinute: 1_000_000_000, concurrentRuns: 1_000_000 },
          metrics: {},
        }
      : {}),
  });
  const app = await serve.bind({ prefix: "/v1" });
  return app.listen({ host: "127.0.0.1", port: 0 });
}

async function measure(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Result> {
  return autocannon({
    url,
    method: "POST",
    connections,
    duration: seconds,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

interface Side {
  requests: number[];
  p50: number[];
  p99: number[];
  errors: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Alternates the floor and chat-serve for several rounds; the order flips every round. */
async function compare(
  floorUrl: string,
  floorBody: unknown,
  servedUrl: string,
  servedBody: unknown,
  servedHeaders?: Record<string, string>,
) {
  const sides: Record<"floor" | "served", Side> = {
    floor: { requests: [], p50: [], p99: [], errors: 0 },
    served: { requests: [], p50: [], p99: [], errors: 0 },
  };
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? (["floor", "served"] as const) : (["served", "floor"] as const);
    const results: Partial<Record<"floor" | "served", Result>> = {};
    for (const side of order) {
      results[side] = await measure(
        side === "floor" ? floorUrl : servedUrl,
        side === "floor" ? floorBody : servedBody,
        side === "floor" ? {} : servedHeaders,
      );
    }
    for (const side of ["floor", "served"] as const) {
      const result = results[side]!;
      sides[side].requests.push(result.requests.average);
      sides[side].p50.push(result.latency.p50);
      sides[side].p99.push(result.latency.p99);
      sides[side].errors += result.errors + result.non2xx;
    }
    ratios.push(results.served!.requests.average / results.floor!.requests.average);
  }
  return { sides, ratio: median(ratios), spread: [Math.min(...ratios), Math.max(...ratios)] };
}

function rows(name: string, comparison: Awaited<ReturnType<typeof compare>>, floorName = "floor", servedName = "chat-serve") {
  const row = (label: string, side: Side, ratio: string) => ({
    case: label,
    "req/s": Math.round(median(side.requests)),
    "p50 ms": median(side.p50),
    "p99 ms": median(side.p99),
    errors: side.errors,
    "throughput vs floor": ratio,
  });
  const [low, high] = comparison.spread;
  return [
    row(`${floorName}: ${name}`, comparison.sides.floor, "1.00"),
    row(`${servedName}: ${name}`, comparison.sides.served, `${comparison.ratio.toFixed(2)} (${low!.toFixed(2)}–${high!.toFixed(2)})`),
  ];
}

const floor = await floorApp();
const served = await chatServeApp();
const chatBody = (stream: boolean) => ({ model: "echo", stream, messages: [{ role: "user", content: prompt }] });

console.log(`chat-serve bench: ${rounds} rounds of ${seconds}s per side, ${connections} connections, node ${process.version}`);
const table: ReturnType<typeof rows> = [];
if (process.env.BENCH_ONLY !== "production") {
  const complete = await compare(`${floor}/complete`, { text: prompt }, `${served}/v1/chat/completions`, chatBody(false));
  const streaming = await compare(`${floor}/stream`, { text: prompt }, `${served}/v1/chat/completions`, chatBody(true));
  const responsesBody = (stream: boolean) => ({ model: "echo", stream, input: prompt });
  const responsesComplete = await compare(`${floor}/complete`, { text: prompt }, `${served}/v1/responses`, responsesBody(false));
  const responsesStreaming = await compare(`${floor}/stream`, { text: prompt }, `${served}/v1/responses`, responsesBody(true));
  table.push(
    ...rows("complete", complete),
    ...rows("streaming", streaming),
    ...rows("Responses complete", responsesComplete),
    ...rows("Responses streaming", responsesStreaming),
  );
}
// What API keys, rate limits and metrics cost together: the same server without them is the floor.
const production = await chatServeApp(true);
const productionCost = await compare(
  `${served}/v1/chat/completions`,
  chatBody(false),
  `${production}/v1/chat/completions`,
  chatBody(false),
  {
    authorization: `Bearer ${BENCH_KEY}`,
  },
);
table.push(...rows("complete", productionCost, "chat-serve, no production features", "auth + limits + metrics"));
console.table(table);
console.log("req/s and latencies are medians over the rounds; the ratio is the median per-round ratio (min–max).");
process.exit(0);
