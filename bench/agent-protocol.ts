// The LangGraph Agent Protocol on chat-serve against the same graph on the LangGraph.js API
// server (`langgraphjs dev`, in memory), driven by what `@langchain/langgraph-sdk` sends:
// `runs.stream` with `messages-tuple` and `runs.wait` (stateless, under autocannon, alternating
// rounds), and a background `runs.create` followed by `runs.join` on a thread (clients in a
// loop). At 10 and 64 clients on chat-serve's embedded default, and at 10 on Postgres + Redis.
// Then the price of sharing: a streamed run on Postgres + Redis (queued, its events through
// Redis) against the same run in the process its client reached, on the same Postgres.

import { performance } from "node:perf_hooks";
import { Client } from "@langchain/langgraph-sdk";
import { startLangGraph } from "./langgraph-api.js";
import { type Comparison, compare, median, percentile, settings } from "./lib/load.js";
import { processTreeRss, type Server, startChatServe } from "./lib/processes.js";
import { fixed, type Row, row } from "./lib/results.js";
import { PROMPT } from "./lib/shared.js";

const input = { messages: [{ role: "user", content: PROMPT }] };
const AREA = "Agent Protocol vs LangGraph API server";
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);

/** Background runs, each created on a thread of its own and joined, by `clients` clients in a loop: runs a second, latency p50 / p99. */
async function createAndJoin(server: Server, clients: number, seconds: number) {
  const client = new Client({ apiUrl: server.url });
  const threads = await Promise.all(Array.from({ length: clients }, () => client.threads.create()));
  const latencies: number[] = [];
  const cpuBefore = server.cpuMs();
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    threads.map(async (thread) => {
      while (performance.now() < until) {
        const started = performance.now();
        const run = await client.runs.create(thread.thread_id, "echo", { input });
        await client.runs.join(thread.thread_id, run.run_id);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return {
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuMs: (server.cpuMs() - cpuBefore) / Math.max(1, latencies.length),
  };
}

/** A comparison's throughput row: runs a second on each side, the median ratio and its range. */
function throughputRow(name: string, result: Comparison): Row {
  return row(
    AREA,
    name,
    `${Math.round(result.served.requests)} runs/s`,
    `${Math.round(result.baseline.requests)} runs/s`,
    result.throughput.ratio,
    undefined,
    [result.throughput.low, result.throughput.high],
  );
}

async function streamAndWait(label: string, official: Server, served: Server, clients: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, path, body] of [
    ["runs.stream (messages-tuple)", "/runs/stream", { assistant_id: "echo", input, stream_mode: ["messages-tuple"] }],
    ["runs.wait", "/runs/wait", { assistant_id: "echo", input }],
  ] as const) {
    const result = await compare(
      { server: official, load: { url: `${official.url}${path}`, body } },
      { server: served, load: { url: `${served.url}${path}`, body } },
      clients,
    );
    rows.push(
      throughputRow(`${label}, ${name}, ${clients} clients: throughput`, result),
      row(
        AREA,
        `${label}, ${name}, ${clients} clients: latency p50 / p99`,
        `${result.served.p50} / ${result.served.p99} ms`,
        `${result.baseline.p50} / ${result.baseline.p99} ms`,
        result.p99,
      ),
      row(
        AREA,
        `${label}, ${name}, ${clients} clients: server CPU per run`,
        `${fixed(result.served.cpuMs * 1000, 0)} µs`,
        `${fixed(result.baseline.cpuMs * 1000, 0)} µs`,
        result.cpu,
      ),
    );
  }
  return rows;
}

async function background(label: string, official: Server, served: Server, clients: number): Promise<Row[]> {
  const seconds = settings.seconds * 2;
  const runs = { official: [] as Awaited<ReturnType<typeof createAndJoin>>[], served: [] as Awaited<ReturnType<typeof createAndJoin>>[] };
  for (let round = 0; round < Math.max(3, Math.ceil(settings.rounds / 2)); round += 1) {
    const order = round % 2 === 0 ? (["official", "served"] as const) : (["served", "official"] as const);
    for (const side of order) runs[side].push(await createAndJoin(side === "official" ? official : served, clients, seconds));
  }
  const mid = (side: "official" | "served", key: "perSecond" | "p50" | "p99" | "cpuMs") => median(runs[side].map((run) => run[key]));
  return [
    row(
      AREA,
      `${label}, runs.create + join, ${clients} clients: runs a second`,
      `${fixed(mid("served", "perSecond"), 1)}`,
      `${fixed(mid("official", "perSecond"), 1)}`,
      mid("served", "perSecond") / mid("official", "perSecond"),
    ),
    row(
      AREA,
      `${label}, runs.create + join, ${clients} clients: latency p50 / p99`,
      `${fixed(mid("served", "p50"), 0)} / ${fixed(mid("served", "p99"), 0)} ms`,
      `${fixed(mid("official", "p50"), 0)} / ${fixed(mid("official", "p99"), 0)} ms`,
      mid("served", "p99") / mid("official", "p99"),
    ),
    row(
      AREA,
      `${label}, runs.create + join, ${clients} clients: server CPU per run`,
      `${fixed(mid("served", "cpuMs") * 1000, 0)} µs`,
      `${fixed(mid("official", "cpuMs") * 1000, 0)} µs`,
      mid("served", "cpuMs") / mid("official", "cpuMs"),
    ),
  ];
}

/** Milliseconds from a `runs.stream` request to its first token, `count` runs one at a time. */
async function firstTokens(server: Server, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    const response = await fetch(`${server.url}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "echo", input, stream_mode: ["messages-tuple"] }),
    });
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (times.length === index && text.includes("event: messages")) times.push(performance.now() - started);
    }
  }
  return times;
}

/** A streamed run on Postgres + Redis against the same run in one process on the same Postgres. */
async function priceOfSharing(inProcess: Server, shared: Server): Promise<Row[]> {
  const name = "Postgres + Redis vs in process on Postgres, runs.stream";
  const load = (server: Server) => ({
    server,
    load: { url: `${server.url}/runs/stream`, body: { assistant_id: "echo", input, stream_mode: ["messages-tuple"] } },
  });
  const result = await compare(load(inProcess), load(shared), 10);
  const first = { inProcess: [] as number[], shared: [] as number[] };
  for (let round = 0; round < 4; round += 1) {
    for (const side of round % 2 === 0 ? (["inProcess", "shared"] as const) : (["shared", "inProcess"] as const))
      first[side].push(...(await firstTokens(side === "shared" ? shared : inProcess, 25)));
  }
  const [shared50, local50] = [percentile(first.shared, 0.5), percentile(first.inProcess, 0.5)];
  return [
    row(
      AREA,
      `${name}, 10 clients: server CPU per run`,
      `${fixed(result.served.cpuMs * 1000, 0)} µs`,
      `${fixed(result.baseline.cpuMs * 1000, 0)} µs`,
      result.cpu,
      { atMost: 1.2 },
    ),
    throughputRow(`${name}, 10 clients: throughput`, result),
    row(
      AREA,
      `${name}, one at a time: time to first token p50 / p99 (difference at p50)`,
      `${fixed(shared50, 1)} / ${fixed(percentile(first.shared, 0.99), 1)} ms (${shared50 >= local50 ? "+" : ""}${fixed(shared50 - local50, 1)} ms)`,
      `${fixed(local50, 1)} / ${fixed(percentile(first.inProcess, 0.99), 1)} ms`,
      shared50 / local50,
    ),
  ];
}

/** chat-serve as the protocol's clients address it: at its origin (the CLI prints the API's URL, with its prefix). */
async function served(config: string): Promise<Server> {
  const server = await startChatServe(["--config", config]);
  return { ...server, url: new URL(server.url).origin };
}

/**
 * `count` streams (`runs.stream`, `messages-tuple`) open at once on `assistant`: the server's
 * memory (its process tree's RSS) while all of them are open, over its memory before, per
 * stream; and how many delivered the whole answer.
 */
async function openStreams(server: Server, assistant: string, count: number) {
  const before = processTreeRss(server.pid);
  let opened = 0;
  const streams = Array.from({ length: count }, async () => {
    const response = await fetch(`${server.url}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: assistant, input, stream_mode: ["messages-tuple"] }),
    });
    const decoder = new TextDecoder();
    let text = "";
    let counted = false;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (!counted && text.includes("event: messages")) {
        counted = true;
        opened += 1;
      }
    }
    return text.includes(PROMPT.split(" ").at(-1) ?? "");
  });
  const deadline = performance.now() + 60_000;
  while (opened < count && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const during = processTreeRss(server.pid);
  const delivered = (await Promise.all(streams)).filter(Boolean).length;
  return { perStream: (during - before) / count, opened, delivered };
}

async function memory(official: Server, served: Server, count: number): Promise<Row[]> {
  const mine = await openStreams(served, "slow", count);
  const theirs = await openStreams(official, "echo", count);
  return [
    row(
      AREA,
      `embedded, ${count} open streams: server memory (RSS) per stream`,
      `${fixed(mine.perStream / 1024, 1)} KiB (${mine.delivered}/${count} whole)`,
      `${fixed(theirs.perStream / 1024, 1)} KiB (${theirs.delivered}/${count} whole)`,
      mine.perStream / theirs.perStream,
    ),
  ];
}

export async function agentProtocol(): Promise<Row[]> {
  const official = await startLangGraph("demo/graphs/echo.ts:graph");
  const rows: Row[] = [];
  try {
    const embedded = await served("bench/agent.config.ts");
    try {
      for (const clients of [10, 64]) rows.push(...(await streamAndWait("embedded", official, embedded, clients)));
      rows.push(...(await background("embedded", official, embedded, 10)));
      // Its own server for the slow graph, with as many runs at a time as streams are opened (its default is 10).
      const slowOfficial = await startLangGraph("bench/graphs/slow-echo.ts:graph", { jobs: STREAMS });
      try {
        rows.push(...(await memory(slowOfficial, embedded, STREAMS)));
      } finally {
        await slowOfficial.stop();
      }
    } finally {
      await embedded.stop();
    }
    const shared = await served("bench/agent-postgres.config.ts");
    try {
      rows.push(...(await streamAndWait("Postgres + Redis", official, shared, 10)));
      rows.push(...(await background("Postgres + Redis", official, shared, 10)));
      const inProcess = await served("bench/agent-postgres-only.config.ts");
      try {
        rows.push(...(await priceOfSharing(inProcess, shared)));
      } finally {
        await inProcess.stop();
      }
    } finally {
      await shared.stop();
    }
  } finally {
    await official.stop();
  }
  return rows;
}
