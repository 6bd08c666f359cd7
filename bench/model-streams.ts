// Streaming model calls at scale: a graph whose real `ChatOpenAI` streams from a loopback
// OpenAI-compatible provider (bench/provider.ts, usage in the last chunk), at 100, 1,000 and
// 5,000 concurrent streams (BENCH_MODEL_STREAMS), served by chat-serve (chat completions and
// Responses), by the floor doing the spec's required work (bench/target.ts `/stream-required`)
// and by the LangGraph.js API server (`POST /runs/stream`, messages-tuple mode; up to
// BENCH_LANGGRAPH_STREAMS streams, default 1,000).
//
// The load is one a single process can carry, so that latency measures the server and not a
// queue: LangChain's `ChatOpenAI` costs the floor itself about 0.2 ms of CPU per token and
// several ms per run, so one core carries a few thousand tokens a second. Streams open at
// BENCH_ARRIVALS a second (default 40; the ramp capped at BENCH_RAMP_SECONDS, default 25, so
// 5,000 streams open at 200 a second, a stress test), all of them send BENCH_TOKEN_RATE tokens
// a second together (default 1,000: a token every 100 ms per stream at 100 streams, every 5 s
// at 5,000; never faster than BENCH_TOKEN_DELAY_MS, default 20), and each lasts the ramp plus
// BENCH_HOLD_SECONDS (default 5), so every stream is open at the end of the ramp.
//
// Every token carries the provider's clock (when the request arrived, when the token was
// written), so the client sees exactly what the server in between added:
// - time to first token added: the client's time to first token − the provider's own;
// - inter-token delay added: the client's gap between two tokens − the provider's gap;
// - server CPU per token: the server's CPU time (process tree) over the run / tokens delivered,
//   and how busy its core was;
// - heap and RSS per open stream: (after a full GC half the hold after the ramp − before) /
//   open streams; latency counts until that measurement (it stops the world and leaves a
//   backlog), so it covers the ramp and the streams all open together;
// - event-loop delay p99 / max: how late a 1 ms timer in the server ran, over the same span;
// - errors: streams that did not answer 200, broke off, or missed a token.
// Each side runs in a fresh process pinned to the server core; the provider and the client
// share the other cores.

import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request } from "undici";
import { startLangGraph } from "./langgraph-api.js";
import { percentile } from "./lib/load.js";
import { type LoopDelay, processTreeRss, type Server, startProvider, startTarget, type Target } from "./lib/processes.js";
import { fixed, plainRow, type Row, row } from "./lib/results.js";

const LEVELS = (process.env.BENCH_MODEL_STREAMS ?? "100,1000,5000").split(",").map(Number);
const LANGGRAPH_MAX = Number(process.env.BENCH_LANGGRAPH_STREAMS ?? 1000);
const ARRIVALS = Number(process.env.BENCH_ARRIVALS ?? 40);
const MAX_RAMP_SECONDS = Number(process.env.BENCH_RAMP_SECONDS ?? 25);
const TOKEN_RATE = Number(process.env.BENCH_TOKEN_RATE ?? 1000);
const MIN_DELAY_MS = Number(process.env.BENCH_TOKEN_DELAY_MS ?? 20);
const HOLD_SECONDS = Number(process.env.BENCH_HOLD_SECONDS ?? 5);
/** Only the sides whose name holds one of these words (`floor`, `chat`, `Responses`, `LangGraph`). */
const ONLY_SIDES = process.env.BENCH_MODEL_SIDES?.split(",").map((word) => word.trim());

/** The load at one number of streams: how fast they open, and what each streams. */
function loadAt(streams: number): { rampMs: number; delayMs: number; tokens: number } {
  const rampMs = Math.min(streams / ARRIVALS, MAX_RAMP_SECONDS) * 1000;
  const delayMs = Math.max(MIN_DELAY_MS, Math.round((streams / TOKEN_RATE) * 1000));
  return { rampMs, delayMs, tokens: Math.max(2, Math.ceil((rampMs + HOLD_SECONDS * 1000) / delayMs)) };
}
const PROMPT = "tell me a long story";

const SIDES = ["floor + usage + abort", "chat-serve, chat completions", "chat-serve, Responses", "LangGraph API server"] as const;
type Side = (typeof SIDES)[number];

/** What one side measured at one number of concurrent streams. */
interface Measured {
  side: Side;
  streams: number;
  ttft: number[];
  gaps: number[];
  cpuPerToken: number;
  /** Server CPU time over wall time: 1 is one core saturated. */
  busy: number;
  heapPerStream: number | undefined;
  rssPerStream: number;
  /** Streams open when the memory was read (requests sent − streams ended). */
  openAtProbe: number;
  /** How late the server's event loop ran its timers over the run (not for the LangGraph API server). */
  loopDelay: LoopDelay | undefined;
  errors: number;
  firstError: string | undefined;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;
const MARK = /([AT])(\d+\.\d+)/gu;

interface Route {
  url: string;
  body: unknown;
  /** The streamed text of one SSE frame, or undefined for frames that carry none. */
  text(event: string | undefined, data: string): string | undefined;
  /** Whether the frame is the stream's own end. */
  ends(event: string | undefined, data: string): boolean;
  /** Whether the stream has such a frame (LangGraph's streams just end). */
  closingFrame: boolean;
}

function routeOf(side: Side, url: string): Route {
  switch (side) {
    case "chat-serve, chat completions":
      return {
        url: `${url}/v1/chat/completions`,
        body: { model: "echo", stream: true, messages: [{ role: "user", content: PROMPT }] },
        text: (_, data) => (data === "[DONE]" ? undefined : JSON.parse(data).choices?.[0]?.delta?.content),
        ends: (_, data) => data === "[DONE]",
        closingFrame: true,
      };
    case "chat-serve, Responses":
      return {
        url: `${url}/v1/responses`,
        body: { model: "echo", stream: true, input: PROMPT },
        text: (event, data) => (event === "response.output_text.delta" ? JSON.parse(data).delta : undefined),
        ends: (event) => event === "response.completed",
        closingFrame: true,
      };
    case "floor + usage + abort":
      return {
        url: `${url}/stream-required`,
        body: { text: PROMPT },
        text: (_, data) => (data === "[DONE]" ? undefined : JSON.parse(data).text),
        ends: (_, data) => data === "[DONE]",
        closingFrame: true,
      };
    case "LangGraph API server":
      return {
        url: `${url}/runs/stream`,
        body: { assistant_id: "echo", input: { messages: [{ role: "user", content: PROMPT }] }, stream_mode: ["messages-tuple"] },
        text: (event, data) => (event === "messages" ? JSON.parse(data)[0]?.content : undefined),
        ends: () => false,
        closingFrame: false,
      };
  }
}

interface StreamResult {
  ttft: number | undefined;
  gaps: number[];
  tokens: number;
  error: string | undefined;
}

/**
 * Until when latency counts: the memory read stops the world for a second and leaves a backlog
 * behind it, the bench's doing and not the server's, so gaps from then on are left out.
 */
type Window = { until: number };

async function oneStream(route: Route, expected: number, dispatcher: Agent, window: Window, onFirst: () => void): Promise<StreamResult> {
  const sentAt = now();
  const result: StreamResult = { ttft: undefined, gaps: [], tokens: 0, error: undefined };
  try {
    const response = await request(route.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(route.body),
      dispatcher,
    });
    if (response.statusCode !== 200) {
      result.error = `${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`;
      return result;
    }
    let buffer = "";
    let ended = false;
    let arrived: number | undefined;
    let previous: { sent: number; received: number } | undefined;
    for await (const data of response.body) {
      const received = now();
      buffer += data.toString();
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event: string | undefined;
        let payload = "";
        for (const line of frame.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) payload += line.slice(6);
        }
        if (payload === "") continue;
        if (route.ends(event, payload)) ended = true;
        const text = route.text(event, payload);
        if (typeof text !== "string") continue;
        for (const [, kind, value] of text.matchAll(MARK)) {
          const at = Number(value);
          if (kind === "A") {
            arrived = at;
            continue;
          }
          result.tokens += 1;
          if (previous === undefined) {
            result.ttft = received - sentAt - (at - (arrived ?? at));
            onFirst();
          } else if (received < window.until) {
            result.gaps.push(received - previous.received - (at - previous.sent));
          }
          previous = { sent: at, received };
        }
      }
    }
    if (result.tokens !== expected) result.error = `${result.tokens} of ${expected} tokens`;
    else if (!ended && route.closingFrame) result.error = "the stream ended without its closing event";
  } catch (error) {
    result.error = (error as Error).message;
  }
  return result;
}

interface Running {
  server: Server;
  url: string;
  memory(): Promise<{ heapUsed: number | undefined; rss: number }>;
  /** Resets the server's event-loop delay reading, and reads it (undefined: a server that has none). */
  resetLoopDelay(): Promise<void>;
  loopDelay(): Promise<LoopDelay | undefined>;
  stop(): Promise<void>;
}

async function start(side: Side, provider: { url: string; model: string }, streams: number): Promise<Running> {
  if (side === "LangGraph API server") {
    const server = await startLangGraph("bench/graphs/provider-chat.ts:graph", {
      jobs: streams,
      env: { BENCH_PROVIDER_URL: provider.url, BENCH_PROVIDER_MODEL: provider.model },
    });
    return {
      server,
      url: server.url,
      memory: async () => ({ heapUsed: undefined, rss: processTreeRss(server.pid) }),
      resetLoopDelay: async () => {},
      loopDelay: async () => undefined,
      stop: server.stop,
    };
  }
  process.env.BENCH_PROVIDER_URL = provider.url;
  process.env.BENCH_PROVIDER_MODEL = provider.model;
  const target: Target = await startTarget(side === "floor + usage + abort" ? "floor" : "chat-serve", { graph: "provider" });
  return { server: target, ...target };
}

async function measure(side: Side, streams: number, providerUrl: string): Promise<Measured> {
  const load = loadAt(streams);
  const running = await start(side, { url: providerUrl, model: `bench-${load.tokens}x${load.delayMs}` }, streams);
  const route = routeOf(side, running.url);
  const dispatcher = new Agent({ connections: streams + 16, pipelining: 0, headersTimeout: 600_000, bodyTimeout: 600_000 });
  try {
    // Warm the code paths (short answers of the same shape), then take the baseline.
    const warm = await Promise.all(
      Array.from({ length: 16 }, () => oneStream(route, load.tokens, dispatcher, { until: Number.POSITIVE_INFINITY }, () => {})),
    );
    const warmError = warm.find((result) => result.error !== undefined)?.error;
    if (warmError !== undefined) throw new Error(`${side}: ${warmError}`);
    const before = await running.memory();
    await running.resetLoopDelay();
    const cpuBefore = running.server.cpuMs();
    const startedAt = now();
    const window: Window = { until: Number.POSITIVE_INFINITY };
    let firsts = 0;
    let ended = 0;
    let probe!: () => void;
    const probeTime = new Promise<void>((resolve) => (probe = resolve));
    const all = Array.from({ length: streams }, async (_, index) => {
      await sleep((index * load.rampMs) / streams);
      const result = await oneStream(route, load.tokens, dispatcher, window, () => {
        firsts += 1;
        if (firsts === streams) probe();
      });
      ended += 1;
      probe();
      return result;
    });
    // Memory with every stream open, half the hold after the last one opened (or, on a machine
    // too slow to open them all before the first ends, as many as are open then); latency
    // counts until then, so it covers the ramp and the streams all open together.
    await probeTime;
    await sleep((HOLD_SECONDS * 1000) / 2);
    const openAtProbe = streams - ended;
    window.until = now();
    const loopDelay = await running.loopDelay();
    const open = await running.memory();
    const results = await Promise.all(all);
    const cpu = running.server.cpuMs() - cpuBefore;
    const wall = now() - startedAt;
    const tokens = results.reduce((sum, result) => sum + result.tokens, 0);
    const failed = results.filter((result) => result.error !== undefined);
    return {
      side,
      streams,
      ttft: results.flatMap((result) => (result.ttft === undefined ? [] : [result.ttft])),
      gaps: results.flatMap((result) => result.gaps),
      cpuPerToken: cpu / Math.max(1, tokens),
      busy: cpu / wall,
      heapPerStream:
        open.heapUsed === undefined || before.heapUsed === undefined ? undefined : (open.heapUsed - before.heapUsed) / openAtProbe,
      rssPerStream: (open.rss - before.rss) / openAtProbe,
      openAtProbe,
      loopDelay,
      errors: failed.length,
      firstError: failed[0]?.error,
    };
  } finally {
    await dispatcher.close();
    await running.stop();
  }
}

const ms = (value: number) => `${fixed(value, 2)} ms`;
const kib = (bytes: number | undefined) => (bytes === undefined ? "–" : `${fixed(bytes / 1024, 1)} KiB`);

/** One line of the section's own table. */
function line(measured: Measured, floor: Measured | undefined): string {
  const heap =
    measured.heapPerStream === undefined
      ? "–"
      : floor?.heapPerStream === undefined || measured === floor
        ? kib(measured.heapPerStream)
        : `${kib(measured.heapPerStream)} (${fixed(measured.heapPerStream / floor.heapPerStream)}×)`;
  const cpu =
    floor === undefined || measured === floor
      ? `${fixed(measured.cpuPerToken * 1000, 1)} µs`
      : `${fixed(measured.cpuPerToken * 1000, 1)} µs (${fixed(measured.cpuPerToken / floor.cpuPerToken)}×)`;
  const cells = [
    String(measured.streams),
    measured.side,
    `${ms(percentile(measured.ttft, 0.5))} / ${ms(percentile(measured.ttft, 0.99))}`,
    `${ms(percentile(measured.gaps, 0.5))} / ${ms(percentile(measured.gaps, 0.99))}`,
    cpu,
    `${Math.round(measured.busy * 100)} %`,
    heap,
    kib(measured.rssPerStream),
    measured.openAtProbe === measured.streams ? String(measured.streams) : `${measured.openAtProbe} of ${measured.streams}`,
    measured.loopDelay === undefined ? "–" : `${ms(measured.loopDelay.p99)} / ${ms(measured.loopDelay.max)}`,
    measured.errors === 0 ? "0" : `${measured.errors} (${measured.firstError})`,
  ];
  return `| ${cells.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`;
}

/** The target rows of the main table: 1,000 streams for latency, every level for memory, 5,000 for errors. */
function targetRows(level: Measured[]): Row[] {
  const floor = level.find((measured) => measured.side === "floor + usage + abort");
  const rows: Row[] = [];
  const area = `${level[0]!.streams} model streams`;
  for (const measured of level.filter((candidate) => candidate.side.startsWith("chat-serve"))) {
    const api = measured.side === "chat-serve, Responses" ? "Responses" : "chat completions";
    const ttft = percentile(measured.ttft, 0.5);
    const gap = percentile(measured.gaps, 0.99);
    const latencyTarget = measured.streams === 1000;
    rows.push(
      plainRow(
        area,
        `${api}: time to first token added, p50`,
        ms(ttft),
        floor === undefined ? "–" : `${ms(percentile(floor.ttft, 0.5))} (floor)`,
        "–",
        latencyTarget ? "≤ 2 ms" : "–",
        latencyTarget ? (ttft <= 2 ? "yes" : "no") : "–",
      ),
      plainRow(
        area,
        `${api}: inter-token delay added, p99`,
        ms(gap),
        floor === undefined ? "–" : `${ms(percentile(floor.gaps, 0.99))} (floor)`,
        "–",
        latencyTarget ? "≤ 1 ms" : "–",
        latencyTarget ? (gap <= 1 ? "yes" : "no") : "–",
      ),
    );
    if (floor?.heapPerStream !== undefined && measured.heapPerStream !== undefined) {
      rows.push(
        row(
          area,
          `${api}: heap per open stream vs floor + usage + abort`,
          kib(measured.heapPerStream),
          kib(floor.heapPerStream),
          measured.heapPerStream / floor.heapPerStream,
          { atMost: 1.1 },
        ),
      );
    }
    rows.push(
      plainRow(
        area,
        `${api}: streams with an error`,
        String(measured.errors),
        floor === undefined ? "–" : `${floor.errors} (floor)`,
        "–",
        "0",
        measured.errors === 0 ? "yes" : "no",
      ),
    );
  }
  return rows;
}

export async function modelStreams(): Promise<{ rows: Row[]; notes: string[]; tables: string[] }> {
  const provider = await startProvider({});
  const lines = [
    "| streams | server | time to first token added, p50 / p99 | inter-token delay added, p50 / p99 | server CPU per token (× floor) | server core busy | heap per open stream (× floor) | RSS per open stream | open at the memory read | event-loop delay p99 / max | streams with an error |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  const rows: Row[] = [];
  try {
    for (const streams of LEVELS) {
      const sides = SIDES.filter(
        (side) =>
          (side !== "LangGraph API server" || streams <= LANGGRAPH_MAX) &&
          (ONLY_SIDES === undefined || ONLY_SIDES.some((word) => side.includes(word))),
      );
      const level: Measured[] = [];
      for (const side of sides) {
        process.stderr.write(`${streams} × ${side}… `);
        level.push(await measure(side, streams, provider.url));
      }
      const floor = level.find((measured) => measured.side === "floor + usage + abort");
      for (const measured of level) lines.push(line(measured, floor));
      rows.push(...targetRows(level));
    }
  } finally {
    await provider.stop();
  }
  return {
    rows,
    tables: [lines.join("\n")],
    notes: [
      `models: ${LEVELS.map((streams) => {
        const load = loadAt(streams);
        return `${streams} streams opened over ${fixed(load.rampMs / 1000, 1)} s, ${load.tokens} tokens each, one every ${load.delayMs} ms`;
      }).join("; ")}; the LangGraph API server up to ${LANGGRAPH_MAX} streams, with as many jobs per worker as streams.`,
    ],
  };
}
