// Where a bench case spends its time: one target process under autocannon, with its garbage
// collections counted by kind and, for one case, a V8 CPU profile summed by where the code lives.
// Not part of `npm run bench`; run it after `npm run build`:
//
//   node --import tsx bench/profile.ts responses                  profile one case
//   PROFILE_PREFILL=12000 node --import tsx bench/profile.ts responses responses-nostore
//                                                                 cases side by side, no profile
//
// Cases on the floor: complete, complete-required, stream, stream-required; on chat-serve:
// chat, chat-stream, responses, responses-stream, responses-nostore (all cases of one run on
// one side). Settings: PROFILE_SECONDS (per case and round, default 10 for a profile, 2 for
// cases side by side), PROFILE_ROUNDS (side by side, default 5), PROFILE_CONNECTIONS (default
// 10), PROFILE_PREFILL (responses stored before measuring, default 0), PROFILE_TOP (functions
// listed, default 25), PROFILE_OWNER (whose functions are listed: chat-serve, the default, a
// package such as zod, or node).

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { type Load, median, sample } from "./lib/load.js";
import { type Collections, describePinning, startTarget, type Target } from "./lib/processes.js";
import { chatBody, PROMPT, responsesBody } from "./lib/shared.js";

const FLOOR_CASES = ["complete", "complete-required", "stream", "stream-required"];
const SERVED_CASES = ["chat", "chat-stream", "responses", "responses-stream", "responses-nostore"];

const cases = process.argv.slice(2);
const unknown = cases.filter((name) => !FLOOR_CASES.includes(name) && !SERVED_CASES.includes(name));
const onFloor = cases.every((name) => FLOOR_CASES.includes(name));
if (cases.length === 0 || unknown.length > 0 || (!onFloor && !cases.every((name) => SERVED_CASES.includes(name)))) {
  console.error(
    `Name one or more cases of one side: on the floor ${FLOOR_CASES.join(", ")}; on chat-serve ${SERVED_CASES.join(", ")}.` +
      (unknown.length > 0 ? ` Unknown: ${unknown.join(", ")}.` : ""),
  );
  process.exit(1);
}

const profiling = cases.length === 1;
const seconds = Number(process.env.PROFILE_SECONDS ?? (profiling ? 10 : 2));
const rounds = profiling ? 1 : Number(process.env.PROFILE_ROUNDS ?? 5);
const connections = Number(process.env.PROFILE_CONNECTIONS ?? 10);
const prefill = Number(process.env.PROFILE_PREFILL ?? 0);
const top = Number(process.env.PROFILE_TOP ?? 25);
const listed = process.env.PROFILE_OWNER ?? "chat-serve";

function load(target: Target, name: string): Load {
  const streamed = name.includes("stream");
  if (onFloor) return { url: `${target.url}/${name}`, body: { text: PROMPT } };
  if (name.startsWith("chat")) return { url: `${target.url}/v1/chat/completions`, body: chatBody(streamed) };
  return {
    url: `${target.url}/v1/responses`,
    body: { ...responsesBody(streamed), ...(name.endsWith("nostore") ? { store: false } : {}) },
  };
}

const profileDir = mkdtempSync(join(tmpdir(), "chat-serve-profile-"));
const target = await startTarget(onFloor ? "floor" : "chat-serve", {
  nodeOptions: profiling ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
});
console.log(`${cases.join(", ")}: ${connections} connections; ${describePinning()}.`);
try {
  if (prefill > 0) {
    const result = await autocannon({
      url: `${target.url}/v1/responses`,
      method: "POST",
      connections,
      amount: prefill,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(responsesBody(false)),
    });
    console.log(`prefilled: ${result.requests.total} responses stored (${result.non2xx + result.errors} failed)`);
  }
  for (const name of cases) await sample(target, load(target, name), connections, 2);
  await target.collections();
  const results = new Map(cases.map((name) => [name, [] as { requests: number; cpuUs: number; gc: Collections }[]]));
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const name of order) {
      const measured = await sample(target, load(target, name), connections, seconds);
      const gc = await target.collections();
      results.get(name)!.push({ requests: measured.requests, cpuUs: measured.cpuMs * 1000, gc });
    }
  }
  for (const [name, samples] of results) {
    const requests = median(samples.map((entry) => entry.requests));
    const cpuUs = median(samples.map((entry) => entry.cpuUs));
    const served = samples.reduce((sum, entry) => sum + entry.requests * seconds, 0);
    const kinds = new Map<string, Collections[string]>();
    for (const entry of samples) {
      for (const [kind, { count, ms }] of Object.entries(entry.gc)) {
        const sum = kinds.get(kind) ?? { count: 0, ms: 0 };
        kinds.set(kind, { count: sum.count + count, ms: sum.ms + ms });
      }
    }
    const gc = [...kinds]
      .map(([kind, { count, ms }]) => `${kind} ${((count * 1000) / served).toFixed(2)} (${((ms * 1000) / served).toFixed(0)} µs)`)
      .join(", ");
    console.log(`${name}: ${Math.round(requests)} req/s, ${Math.round(cpuUs)} µs CPU per request; collections per 1,000 requests: ${gc}`);
  }
} finally {
  await target.stop();
}

if (profiling) {
  // The largest profile is the main thread's (tsx's loader thread writes another).
  const files = readdirSync(profileDir).map((file) => join(profileDir, file));
  const main = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (main === undefined) throw new Error(`no CPU profile was written to ${profileDir}`);
  summarize(JSON.parse(readFileSync(main, "utf8")) as CpuProfile);
}
rmSync(profileDir, { recursive: true, force: true });

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, node itself, chat-serve's own build, or V8's own states. */
function owner(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node";
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//u.exec(url);
  if (inPackage !== null) return inPackage[1]!;
  if (url.includes("/dist/")) return "chat-serve";
  return "bench";
}

/**
 * Self time by owner; then one owner's functions (chat-serve's unless PROFILE_OWNER names
 * another: a package, `node`), by self time and by total time (with everything they call,
 * each sample counted once per function), in % of the busy time.
 */
function summarize(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const ownFunction = (id: number): string | undefined => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (owner(url, functionName) !== listed) return undefined;
    const file = listed === "chat-serve" ? url.slice(url.indexOf("/dist/") + 1) : url.slice(url.lastIndexOf(`/${listed}/`) + 1);
    return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
  };
  const byOwner = new Map<string, number>();
  const ownSelf = new Map<string, number>();
  const ownTotal = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, time: number) => map.set(key, (map.get(key) ?? 0) + time);
  let busy = 0;
  let total = 0;
  profile.samples.forEach((id, index) => {
    const time = profile.timeDeltas[index] ?? 0;
    const { functionName, url } = byId.get(id)!.callFrame;
    total += time;
    if (functionName === "(idle)") return;
    busy += time;
    add(byOwner, owner(url, functionName), time);
    const self = ownFunction(id);
    if (self !== undefined) add(ownSelf, self, time);
    const seen = new Set<string>();
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const frame = ownFunction(cursor);
      if (frame !== undefined && !seen.has(frame)) {
        seen.add(frame);
        add(ownTotal, frame, time);
      }
    }
  });
  const percent = (time: number) => `${((time * 100) / busy).toFixed(1).padStart(5)} %`;
  const list = (map: Map<string, number>) => {
    for (const [key, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${percent(time)}  ${key}`);
  };
  console.log(`\nCPU profile: ${(busy / 1e6).toFixed(1)} s busy of ${(total / 1e6).toFixed(1)} s; self time by owner:`);
  list(byOwner);
  console.log(`\n${listed}'s functions, self time:`);
  list(ownSelf);
  console.log(`\n${listed}'s functions, total time (with what they call):`);
  list(ownTotal);
}
