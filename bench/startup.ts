// Start to first 200: `chat-serve start` with the repository's demo config, timed from the
// spawn to the first answer of GET /v1/models. The first start has jiti's transpile cache
// emptied (cold); the others reuse it (warm, the median). The baseline is what no fastify
// server of these LangGraph graphs can skip: a Node process that imports `@langchain/langgraph`
// and fastify, and the demo graph modules through jiti (loaded with `require`, as chat-serve's loader
// loads it), and exits.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, rmSync } from "node:fs";
import { median } from "./lib/load.js";
import { ROOT, startChatServe } from "./lib/processes.js";
import { plainRow, type Row } from "./lib/results.js";

const STARTS = Number(process.env.BENCH_STARTS ?? 9);

async function timeStart(): Promise<number> {
  const started = performance.now();
  const server = await startChatServe([]);
  try {
    for (;;) {
      const response = await fetch(`${server.url}/models`).catch(() => undefined);
      if (response?.status === 200) return performance.now() - started;
    }
  } finally {
    await server.stop();
  }
}

async function timeImport(): Promise<number> {
  const started = performance.now();
  const graphs = readdirSync(`${ROOT}demo/graphs`).map((name) => `${ROOT}demo/graphs/${name}`);
  const script = [
    "await import('@langchain/langgraph');",
    "await import('fastify');",
    "const { createRequire } = await import('node:module');",
    `const { createJiti } = createRequire(${JSON.stringify(`${ROOT}noop.js`)})('jiti');`,
    `const jiti = createJiti(${JSON.stringify(`${ROOT}noop.js`)}, { interopDefault: false, moduleCache: true, fsCache: true });`,
    `for (const file of ${JSON.stringify(graphs)}) await jiti.import(file);`,
  ].join("\n");
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: ROOT,
    stdio: "ignore",
  });
  await once(child, "exit");
  return performance.now() - started;
}

export async function startup(): Promise<Row[]> {
  rmSync(`${ROOT}node_modules/.cache/jiti`, { recursive: true, force: true });
  const cold = await timeStart();
  const warm: number[] = [];
  const imports: number[] = [];
  for (let run = 0; run < STARTS; run += 1) {
    warm.push(await timeStart());
    imports.push(await timeImport());
  }
  // Each start is paired with the import that follows it: the ratio is the median of the pairs'
  // ratios, so a slow minute of the machine slows both sides of a pair rather than one median.
  const ratios = warm.map((ms, index) => ms / imports[index]!);
  const ratio = median(ratios);
  const met = ratio <= 1.2 ? "yes" : "no";
  const baseline = `${Math.round(median(imports))} ms (node importing LangGraph, fastify and the demo graphs)`;
  return [
    plainRow(
      "start-up",
      `warm start to first 200 (median of ${STARTS})`,
      `${Math.round(median(warm))} ms`,
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
    plainRow("start-up", "cold start (transpile cache emptied)", `${Math.round(cold)} ms`, baseline, "–", "–", "–"),
  ];
}
