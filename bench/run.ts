// `npm run bench`: the performance page in one command and one table. Every number is a ratio
// to a baseline measured in the same run, because absolute numbers on a shared machine are
// noise. Benchmarks never run in CI. See bench/README.md for how to read the table.
//
//   npm run bench                                   every section
//   BENCH_ONLY=throughput,startup npm run bench     some sections
//   BENCH_ROUNDS=9 BENCH_SECONDS=3 npm run bench    more, longer rounds
//
// Sections: throughput (vs the floor, 10 and 32 connections, time to first content),
// production (API keys, rate limits and metrics vs none), streams (1,000 open streams),
// startup, leases, workers, background (the shared queue vs foreground), langgraph (the
// LangGraph.js API server), agent (the Agent Protocol against that server, through the SDK),
// models (streaming model calls from a loopback provider at 100,
// 1,000 and 5,000 concurrent streams).

import { cpus, totalmem } from "node:os";
import { agentProtocol } from "./agent-protocol.js";
import { background } from "./background.js";
import { langgraphApi } from "./langgraph-api.js";
import { leases } from "./leases.js";
import { settings } from "./lib/load.js";
import { describePinning } from "./lib/processes.js";
import { markdown, type Row } from "./lib/results.js";
import { modelStreams } from "./model-streams.js";
import { openStreams } from "./open-streams.js";
import { startup } from "./startup.js";
import { production, throughput } from "./throughput.js";
import { workers } from "./workers.js";

type Section = () => Promise<Row[] | { rows: Row[]; notes: string[]; tables?: string[] }>;

const SECTIONS: Record<string, Section> = {
  throughput,
  production,
  streams: openStreams,
  startup,
  leases,
  workers,
  background,
  langgraph: langgraphApi,
  agent: agentProtocol,
  models: modelStreams,
};

const only = process.env.BENCH_ONLY?.split(",").map((name) => name.trim());
const unknown = only?.filter((name) => !(name in SECTIONS)) ?? [];
if (unknown.length > 0) {
  console.error(`BENCH_ONLY names no section '${unknown.join("', '")}'; the sections are ${Object.keys(SECTIONS).join(", ")}.`);
  process.exit(1);
}

const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}`;
console.log(`chat-serve bench, ${new Date().toISOString().slice(0, 10)}: ${machine}`);
console.log(`${settings.rounds} rounds of ${settings.seconds} s per side; ${describePinning()}.`);

const rows: Row[] = [];
const notes: string[] = [];
const tables: string[] = [];
for (const [name, section] of Object.entries(SECTIONS)) {
  if (only !== undefined && !only.includes(name)) continue;
  const started = performance.now();
  process.stderr.write(`${name}… `);
  try {
    const result = await section();
    if (Array.isArray(result)) rows.push(...result);
    else {
      rows.push(...result.rows);
      notes.push(...result.notes);
      tables.push(...(result.tables ?? []));
    }
  } catch (error) {
    notes.push(`${name} failed: ${(error as Error).message.split("\n")[0]}`);
  }
  process.stderr.write(`${Math.round((performance.now() - started) / 1000)} s\n`);
}

console.log();
console.log(markdown(rows));
for (const table of tables) console.log(`\n${table}`);
for (const note of notes) console.log(`\n- ${note}`);
console.log("\nThroughput and latency are medians over the rounds; a ratio is the median per-round ratio (its range in brackets).");
process.exit(0);
