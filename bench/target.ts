// One side of a bench comparison, in its own process so that the load generator does not share
// its CPU: `node --import tsx bench/target.ts <side> [slow]`.
//
//   floor       a bare fastify route that calls the graph directly (invoke, or stream in
//               `messages` mode) and writes the text: no validation, no OpenAI shapes, no usage;
//               `/complete-required` and `/stream-required` also do what the spec requires of
//               any server: usage summed by one LangChain callback handler, the run aborted
//               when the client leaves, and (streams) the final state beside the tokens
//   chat-serve  chat-serve serving the same graph under /v1
//   production  chat-serve with API keys, rate limits (never reached) and metrics all on
//
// With `slow`, the graph's model waits between streamed words (open-stream memory); with
// `provider`, the graph is bench/graphs/provider-chat.ts, whose `ChatOpenAI` streams from the
// loopback provider at BENCH_PROVIDER_URL (the `models` section). The graph is served as
// `echo` whichever it is, so that every section sends the same model name.
// It prints `listening <url>` and answers IPC messages: `memory` (heap after a full GC, RSS,
// peak RSS), `loop-reset` and `loop` (the event loop's delay since the reset: how long timers
// were held back, p50 / p99 / max in ms), `gc` (collections by kind since the last `gc`: count
// and pause in ms) and `exit`.

import type { ServerResponse } from "node:http";
import { constants, createHistogram, PerformanceObserver } from "node:perf_hooks";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { HumanMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
// The built package, as users run it (`npm run bench` builds it first).
import { ChatServe, GraphRegistry } from "chat-serve";
import { ScriptedChatModel } from "chat-serve/testing";
import Fastify from "fastify";
import type { Collections } from "./lib/processes.js";
import { BENCH_KEY } from "./lib/shared.js";

const side = process.argv[2];
const mode = process.argv[3];

// The demo `echo` graph; in `slow` mode its model waits between words.
async function benchGraph() {
  if (mode === "provider") return (await import("./graphs/provider-chat.js")).graph;
  if (mode !== "slow") return (await import("../demo/graphs/echo.js")).graph;
  const model = new ScriptedChatModel({
    respond: (messages) => messages.at(-1)?.text ?? "",
    chunkDelayMs: Number(process.env.BENCH_CHUNK_DELAY_MS ?? 250),
  });
  return new StateGraph(MessagesAnnotation)
    .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

const graph = await benchGraph();

/** The least a server can do to report usage: one handler that sums what the models report. */
class UsageSum extends BaseCallbackHandler {
  name = "usage_sum";
  tokens = 0;
  override handleLLMEnd(output: LLMResult): void {
    for (const generations of output.generations) {
      for (const generation of generations) {
        this.tokens +=
          (generation as { message?: { usage_metadata?: { total_tokens: number } } }).message?.usage_metadata?.total_tokens ?? 0;
      }
    }
  }
}

/** A signal that aborts when the response closes before it finished (the client went away). */
function abortOnClose(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const onClose = () => {
    if (!response.writableFinished) controller.abort(new Error("the client disconnected"));
  };
  response.once("close", onClose);
  return controller.signal;
}

async function floorApp() {
  const app = Fastify();
  // The floor doing what the spec requires of any server, on the same routes: usage summed by
  // one callback handler, the run aborted when the client goes away, and for streams the
  // final state beside the tokens (the answer's last message and citations come from it).
  app.post<{ Body: { text: string } }>("/complete-required", async (request, reply) => {
    const usage = new UsageSum();
    const signal = abortOnClose(reply.raw);
    const output = await graph.invoke({ messages: [new HumanMessage(request.body.text)] }, { callbacks: [usage], signal });
    return { text: output.messages.at(-1)?.text, tokens: usage.tokens };
  });
  app.post<{ Body: { text: string } }>("/stream-required", async (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { "content-type": "text/event-stream" });
    const usage = new UsageSum();
    const signal = abortOnClose(reply.raw);
    const stream = await graph.stream(
      { messages: [new HumanMessage(request.body.text)] },
      { streamMode: ["values", "messages"], subgraphs: true, callbacks: [usage], signal },
    );
    for await (const [, mode, data] of stream) {
      if (mode === "messages") reply.raw.write(`data: ${JSON.stringify({ text: data[0].text })}\n\n`);
    }
    reply.raw.end(`data: ${JSON.stringify({ tokens: usage.tokens })}\n\ndata: [DONE]\n\n`);
  });
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
  return app;
}

async function chatServeApp(production: boolean) {
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
  return serve.bind({ prefix: "/v1" });
}

const app = side === "floor" ? await floorApp() : await chatServeApp(side === "production");
// A backlog as deep as the machine allows: the `models` section opens thousands of streams at once.
const url = await app.listen({ host: "127.0.0.1", port: 0, backlog: 4096 });

// How late the event loop is, between `loop-reset` and `loop`: a timer every millisecond
// records how much later than asked it ran (in µs), so a stall shows whoever causes it. The
// full collections of a memory read are the bench's own stall, left out.
const loopDelay = createHistogram();
let lastTick = 0;
let loopTimer: NodeJS.Timeout | undefined;

// Garbage collections by kind (count and pause), for `gc`, which also starts the count again.
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak callbacks",
};
let collections: Collections = {};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = GC_KINDS[((entry as { detail?: unknown }).detail as { kind: number }).kind] ?? "other";
    const sum = collections[kind] ?? { count: 0, ms: 0 };
    collections[kind] = { count: sum.count + 1, ms: sum.ms + entry.duration };
  }
}).observe({ entryTypes: ["gc"] });

process.on("message", async (message: string) => {
  if (message === "loop-reset") {
    loopDelay.reset();
    clearInterval(loopTimer);
    lastTick = performance.now();
    loopTimer = setInterval(() => {
      const now = performance.now();
      loopDelay.record(Math.max(1, Math.round((now - lastTick - 1) * 1000)));
      lastTick = now;
    }, 1);
    process.send?.({ reset: true });
  } else if (message === "loop") {
    clearInterval(loopTimer);
    const ms = (microseconds: number) => microseconds / 1000;
    process.send?.({ p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) });
  } else if (message === "gc") {
    process.send?.(collections);
    collections = {};
  } else if (message === "memory") {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
    globalThis.gc?.();
    lastTick = performance.now();
    const { heapUsed, rss } = process.memoryUsage();
    process.send?.({ heapUsed, rss, maxRss: process.resourceUsage().maxRSS * 1024 });
  } else if (message === "exit") {
    clearInterval(loopTimer);
    await app.close();
    process.exit(0);
  }
});
process.stdout.write(`listening ${url}\n`);
