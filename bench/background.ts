// Background responses on the shared queue: two `chat-serve start` processes on one Redis
// (BullMQ) and one Postgres store, against foreground requests to the same two processes and
// the same graph, alternating rounds. Two numbers:
// - submit → start: from the client sending the request to the graph's node starting (the
//   graph writes the time), p50 and p99, background against foreground;
// - runs per second: background responses submitted and run to completion, against
//   foreground responses, with the same number in flight.

import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { median, percentile, settings } from "./lib/load.js";
import { type Server, spreadLoadGenerator, startChatServe } from "./lib/processes.js";
import { fixed, type Row, row } from "./lib/results.js";

const RUNS = 400;
const IN_FLIGHT = 16;

async function post(url: string, body: unknown): Promise<{ id: string; status: string }> {
  const response = await fetch(`${url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST /responses: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; status: string };
}

async function finished(url: string, id: string): Promise<void> {
  for (;;) {
    const response = (await (await fetch(`${url}/responses/${id}`)).json()) as { status: string };
    if (response.status === "completed") return;
    if (response.status !== "queued" && response.status !== "in_progress") throw new Error(`${id} ended ${response.status}`);
    await sleep(5);
  }
}

/** One round: RUNS responses with IN_FLIGHT at a time, spread over the servers; their submit → start delays. */
async function round(servers: Server[], background: boolean, log: string): Promise<{ perSecond: number; delays: number[] }> {
  const tag = randomUUID().slice(0, 8);
  const sent = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    for (;;) {
      const index = next++;
      if (index >= RUNS) return;
      const url = servers[index % servers.length]!.url;
      const input = `${tag}-${index}`;
      sent.set(input, Date.now());
      const response = await post(url, { model: "stamped", input, ...(background ? { background: true } : {}) });
      if (background) await finished(url, response.id);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const seconds = (performance.now() - started) / 1000;
  const delays: number[] = [];
  for (const line of readFileSync(log, "utf8").split("\n")) {
    const [input, at] = line.split(" ");
    const from = input === undefined ? undefined : sent.get(input);
    if (from !== undefined) delays.push(Number(at) - from);
  }
  return { perSecond: RUNS / seconds, delays };
}

export async function background(): Promise<{ rows: Row[]; notes: string[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), "chat-serve-bench-"));
  const log = path.join(dir, "starts.log");
  process.env.BENCH_START_LOG = log;
  spreadLoadGenerator(true);
  const config = ["--config", "bench/background.config.ts"];
  const servers = [await startChatServe(config, { pin: false }), await startChatServe(config, { pin: false })];
  try {
    const foreground = { perSecond: [] as number[], p50: [] as number[], p99: [] as number[] };
    const queued = { perSecond: [] as number[], p50: [] as number[], p99: [] as number[] };
    // A warm-up round of each, then alternating rounds.
    await round(servers, false, log);
    await round(servers, true, log);
    for (let index = 0; index < settings.rounds; index += 1) {
      for (const [side, isBackground] of [
        [foreground, false],
        [queued, true],
      ] as const) {
        const result = await round(servers, isBackground, log);
        side.perSecond.push(result.perSecond);
        side.p50.push(percentile(result.delays, 0.5));
        side.p99.push(percentile(result.delays, 0.99));
      }
    }
    const [p50, p50Base] = [median(queued.p50), median(foreground.p50)];
    const [p99, p99Base] = [median(queued.p99), median(foreground.p99)];
    const [rate, rateBase] = [median(queued.perSecond), median(foreground.perSecond)];
    return {
      rows: [
        row(
          "background",
          "submit → start p50, background vs foreground (2 processes)",
          `${fixed(p50, 1)} ms`,
          `${fixed(p50Base, 1)} ms`,
          p50 / p50Base,
        ),
        row(
          "background",
          "submit → start p99, background vs foreground (2 processes)",
          `${fixed(p99, 1)} ms`,
          `${fixed(p99Base, 1)} ms`,
          p99 / p99Base,
        ),
        row(
          "background",
          `runs/s, background vs foreground, ${IN_FLIGHT} in flight over 2 processes`,
          `${Math.round(rate)} runs/s`,
          `${Math.round(rateBase)} runs/s`,
          rate / rateBase,
        ),
      ],
      notes: [
        `background: ${RUNS} responses per round, ${settings.rounds} rounds per side; a background run counts once a poll (every 5 ms) sees it completed, so its rate includes the polling.`,
      ],
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    spreadLoadGenerator(false);
    delete process.env.BENCH_START_LOG;
    rmSync(dir, { recursive: true, force: true });
  }
}
