// Start to first 200: `chat-serve start` with the repository's demo config, timed from the
// spawn to the first answer of GET /v1/models. The first start has jiti's transpile cache
// emptied (cold); the others reuse it (warm, the median). The baseline is what no fastify
// server of these LangGraph graphs can skip: a Node process that imports `@langchain/langgraph`
// and fastify, and the demo graph modules through jiti (loaded with `require`, as chat-serve's loader
// loads it), and exits. Each start is paired with an import run after it (wall time, the
// target's row), and again with one begun together with it on the same core (CPU time).

import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, rmSync } from "node:fs";
import { median } from "./lib/load.js";
import { command, ROOT, startChatServe } from "./lib/processes.js";
import { plainRow, type Row } from "./lib/results.js";

const STARTS = Number(process.env.BENCH_STARTS ?? 9);

interface Timed {
  /** Wall time, ms. */
  ms: number;
  /** CPU time of the process (every thread), ms: less disturbed than wall time by a busy machine. */
  cpuMs: number;
}

async function timeStart(): Promise<Timed> {
  const started = performance.now();
  const server = await startChatServe([]);
  try {
    for (;;) {
      const response = await fetch(`${server.url}/models`).catch(() => undefined);
      if (response?.status === 200) return { ms: performance.now() - started, cpuMs: server.cpuMs() };
    }
  } finally {
    await server.stop();
  }
}

/** The baseline's import; on the server core with `pin` (as a start is), else beside the load generator. */
async function timeImport(pin = false): Promise<Timed> {
  const started = performance.now();
  const graphs = readdirSync(`${ROOT}demo/graphs`).map((name) => `${ROOT}demo/graphs/${name}`);
  const script = [
    "await import('@langchain/langgraph');",
    "await import('fastify');",
    "const { createRequire } = await import('node:module');",
    `const { createJiti } = createRequire(${JSON.stringify(`${ROOT}noop.js`)})('jiti');`,
    `const jiti = createJiti(${JSON.stringify(`${ROOT}noop.js`)}, { interopDefault: false, moduleCache: true, fsCache: true });`,
    `for (const file of ${JSON.stringify(graphs)}) await jiti.import(file);`,
    "const { user, system } = process.cpuUsage();",
    "process.stdout.write(String((user + system) / 1000));",
  ].join("\n");
  const [file, args] = command([process.execPath, "--input-type=module", "-e", script], pin);
  const child = spawn(file, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "ignore"],
  });
  let output = "";
  child.stdout.on("data", (data: Buffer) => {
    output += data.toString();
  });
  await once(child, "exit");
  return { ms: performance.now() - started, cpuMs: Number(output) };
}

export async function startup(): Promise<Row[]> {
  rmSync(`${ROOT}node_modules/.cache/jiti`, { recursive: true, force: true });
  const cold = await timeStart();
  const starts: Timed[] = [];
  const floors: Timed[] = [];
  for (let run = 0; run < STARTS; run += 1) {
    starts.push(await timeStart());
    floors.push(await timeImport());
  }
  // Each start is paired with the import that follows it: the ratio is the median of the pairs'
  // ratios, so a slow minute of the machine slows both sides of a pair rather than one median.
  const ratios = starts.map((start, index) => start.ms / floors[index]!.ms);
  const ratio = median(ratios);
  const cpuRatios = starts.map((start, index) => start.cpuMs / floors[index]!.cpuMs);
  // The same pairs side by side: a start and the baseline's import begun together on the server
  // core, so the machine's speed in those seconds is the same for both (it moves by half within
  // seconds on a shared VM). Wall time means nothing when two share a core; CPU time does.
  const together: number[] = [];
  for (let run = 0; run < STARTS; run += 1) {
    const [start, floor] = await Promise.all([timeStart(), timeImport(true)]);
    together.push(start.cpuMs / floor.cpuMs);
  }
  const met = ratio <= 1.2 ? "yes" : "no";
  const baseline = `${Math.round(median(floors.map((floor) => floor.ms)))} ms (node importing LangGraph, fastify and the demo graphs)`;
  return [
    plainRow(
      "start-up",
      `warm start to first 200 (median of ${STARTS})`,
      `${Math.round(median(starts.map((start) => start.ms)))} ms`,
      baseline,
      "–",
      "≤ 1.2× the baseline",
      met,
    ),
    plainRow(
      "start-up",
      "warm start / baseline (median of the paired ratios)",
      `${ratio.toFixed(2)}× (pairs ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
      baseline,
      "–",
      "≤ 1.2×",
      met,
    ),
    plainRow(
      "start-up",
      "CPU time to first 200 / baseline's (median of the paired ratios)",
      `${median(cpuRatios).toFixed(2)}× (pairs ${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)})`,
      `${Math.round(median(floors.map((floor) => floor.cpuMs)))} ms of CPU`,
      "–",
      "–",
      "–",
    ),
    plainRow(
      "start-up",
      "CPU time to first 200 / baseline's, side by side (median of the pairs)",
      `${median(together).toFixed(2)}× (pairs ${Math.min(...together).toFixed(2)}–${Math.max(...together).toFixed(2)})`,
      "the baseline's import begun with each start, on the same core",
      "–",
      "–",
      "–",
    ),
    plainRow("start-up", "cold start (transpile cache emptied)", `${Math.round(cold.ms)} ms`, baseline, "–", "–", "–"),
  ];
}
