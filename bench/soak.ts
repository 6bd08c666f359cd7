// `npm run soak`: 100,000 mixed requests against a `chat-serve start` process serving the
// repository's demo config, then a report: 5xx count, invalid error bodies, hangs, heap after
// GC at the start and the end, RSS, and leases left held. Not part of CI.
//
//   npm run soak                              100,000 requests, 32 at a time
//   SOAK_REQUESTS=20000 SOAK_CONCURRENCY=64 npm run soak
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { fuzzCase, generator } from "../test/helpers/fuzz-bodies.js";
import { assertMatchesOpenAI } from "../test/helpers/openai-schema.js";

const TOTAL = Number(process.env.SOAK_REQUESTS ?? 100_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 32);
const HANG_MS = 30_000;
const SEED = Number(process.env.SOAK_SEED ?? 1);
const root = fileURLToPath(new URL("..", import.meta.url));

// The server: the real CLI, with the probe that reports memory on SIGUSR2.
const child = spawn(
  process.execPath,
  ["--expose-gc", "--import", "tsx", "--import", "./bench/soak-probe.ts", "bin/chat-serve.js", "start", "--port", "0"],
  { cwd: root, env: { ...process.env, NO_COLOR: "1", LOG_LEVEL: "error" }, stdio: ["ignore", "pipe", "inherit"] },
);
let output = "";
child.stdout.on("data", (data: Buffer) => (output += data.toString()));
const baseURL = await new Promise<string>((resolve, reject) => {
  const timer = setInterval(() => {
    const match = /ready (http:\/\/\S+)/u.exec(output);
    if (match?.[1]) {
      clearInterval(timer);
      resolve(match[1]);
    }
  }, 50);
  child.on("exit", (code) => reject(new Error(`chat-serve exited with ${code}:\n${output}`)));
});

async function memory(): Promise<{ heapUsed: number; rss: number; handles: number }> {
  const before = output.length;
  child.kill("SIGUSR2");
  for (;;) {
    const match = /SOAK_MEMORY (\{.*\})/u.exec(output.slice(before));
    if (match?.[1]) return JSON.parse(match[1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const dispatcher = new Agent({ connections: CONCURRENCY, headersTimeout: HANG_MS, bodyTimeout: HANG_MS });
const random = generator(SEED);
const counts = { requests: 0, byStatus: new Map<number, number>(), serverErrors: 0, invalidErrorBodies: 0, hangs: 0, disconnects: 0 };
const pausedRuns: string[] = [];
const examples: string[] = [];

function note(problem: string) {
  if (examples.length < 10) examples.push(problem);
}

async function send(body: string, contentType: string | undefined, options: { disconnectAfterMs?: number } = {}) {
  const controller = new AbortController();
  const hang = setTimeout(() => controller.abort(new Error("hang")), HANG_MS);
  const disconnect =
    options.disconnectAfterMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(new Error("disconnect")), options.disconnectAfterMs);
  try {
    const response = await request(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: contentType === undefined ? {} : { "content-type": contentType },
      body,
      dispatcher,
      signal: controller.signal,
    });
    const text = await response.body.text();
    counts.byStatus.set(response.statusCode, (counts.byStatus.get(response.statusCode) ?? 0) + 1);
    if (response.statusCode >= 500) {
      counts.serverErrors += 1;
      note(`${response.statusCode} ${text.slice(0, 200)} for ${body.slice(0, 200)}`);
    }
    if (response.statusCode >= 400) {
      try {
        assertMatchesOpenAI("ErrorResponse", JSON.parse(text));
      } catch {
        counts.invalidErrorBodies += 1;
        note(`invalid error body ${text.slice(0, 200)}`);
      }
    }
    return { status: response.statusCode, text };
  } catch (error) {
    const reason = controller.signal.reason as Error | undefined;
    if (reason?.message === "hang") {
      counts.hangs += 1;
      note(`hang: ${body.slice(0, 200)}`);
    } else if (reason?.message === "disconnect") {
      counts.disconnects += 1;
    } else {
      note(`request failed: ${(error as Error).message}`);
    }
    return undefined;
  } finally {
    clearTimeout(hang);
    clearTimeout(disconnect);
  }
}

const user = (content: string) => [{ role: "user", content }];

/**
 * Finishes a paused approval run: the replay returns its pending batch, which is then
 * answered. A replay that is 409 run_busy means a lease was left held. Returns whether the
 * run was busy.
 */
async function finishRun(runId: string): Promise<boolean> {
  const replay = await send(
    JSON.stringify({ model: "approval", metadata: { graph_run_id: runId }, messages: user("approve?") }),
    "application/json",
  );
  if (replay === undefined) return false;
  if (replay.status === 409) return true;
  const calls = (JSON.parse(replay.text) as { choices?: { message: { tool_calls?: { id: string }[] } }[] }).choices?.[0]?.message
    .tool_calls;
  if (calls === undefined) return false;
  await send(
    JSON.stringify({
      model: "approval",
      messages: [
        ...user("approve?"),
        { role: "assistant", content: null, tool_calls: calls },
        ...calls.map((call) => ({ role: "tool", tool_call_id: call.id, content: "yes" })),
      ],
    }),
    "application/json",
  );
  return false;
}

/** Answers every run left paused; returns how many were still busy (a lease left held). */
async function finishPausedRuns(): Promise<number> {
  let busy = 0;
  for (const runId of pausedRuns.splice(0)) if (await finishRun(runId)) busy += 1;
  return busy;
}
async function one(index: number) {
  const kind = index % 10;
  if (kind < 3) {
    await send(JSON.stringify({ model: random.pick(["echo", "plain", "tools"]), messages: user(`complete ${index}`) }), "application/json");
  } else if (kind < 5) {
    await send(
      JSON.stringify({
        model: random.pick(["echo", "research"]),
        stream: true,
        stream_options: { include_usage: true },
        metadata: { graph_stream_events: "v1" },
        messages: user(`stream ${index} ${"word ".repeat(50)}`),
      }),
      "application/json",
    );
  } else if (kind === 5) {
    // A client that leaves mid-stream.
    await send(JSON.stringify({ model: "echo", stream: true, messages: user("bye ".repeat(2_000)) }), "application/json", {
      disconnectAfterMs: random.int(20),
    });
  } else if (kind === 6) {
    // An interrupt run: paused (some clients leave mid-request), then most are answered.
    const runId = randomUUID();
    await send(
      JSON.stringify({ model: "approval", stream: random.chance(0.5), metadata: { graph_run_id: runId }, messages: user("approve?") }),
      "application/json",
      random.chance(0.2) ? { disconnectAfterMs: random.int(5) } : {},
    );
    if (random.chance(0.7)) await finishRun(runId);
    else pausedRuns.push(runId);
  } else {
    const { payload, contentType } = fuzzCase(random);
    await send(payload, contentType);
  }
  counts.requests += 1;
}

async function load(from: number, to: number) {
  let next = from;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < to) {
        const index = next;
        next += 1;
        await one(index);
        if (index > from && index % 10_000 === 0)
          process.stderr.write(`${index} requests, ${Math.round((performance.now() - started) / 1000)} s\n`);
      }
    }),
  );
}

// A warm-up (JIT, caches, connection pools) before the baseline is taken.
const WARM_UP = Math.min(2_000, Math.ceil(TOTAL / 10));
const started = performance.now();
await load(0, WARM_UP);
await finishPausedRuns();
const memoryAtStart = await memory();
await load(WARM_UP, TOTAL);
const seconds = (performance.now() - started) / 1000;
const checkedRuns = pausedRuns.length;
const leasesHeld = await finishPausedRuns();
const memoryAtEnd = await memory();
await dispatcher.close();
child.kill("SIGTERM");
await once(child, "exit");

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
const heapChange = (memoryAtEnd.heapUsed - memoryAtStart.heapUsed) / memoryAtStart.heapUsed;
console.log(`
soak: ${counts.requests} requests in ${seconds.toFixed(0)} s (${Math.round(counts.requests / seconds)} req/s), ${CONCURRENCY} at a time, seed ${SEED}
statuses:            ${[...counts.byStatus]
  .sort(([a], [b]) => a - b)
  .map(([status, count]) => `${status}×${count}`)
  .join(" ")}
client disconnects:  ${counts.disconnects}
5xx responses:       ${counts.serverErrors}
invalid error bodies:${counts.invalidErrorBodies}
hangs (> ${HANG_MS / 1000} s):     ${counts.hangs}
heap after GC:       ${mb(memoryAtStart.heapUsed)} after the warm-up, ${mb(memoryAtEnd.heapUsed)} at the end (${(heapChange * 100).toFixed(1)} %)
RSS:                 ${mb(memoryAtStart.rss)} after the warm-up, ${mb(memoryAtEnd.rss)} at the end
active handles:      ${memoryAtStart.handles} after the warm-up, ${memoryAtEnd.handles} at the end (the client's ${CONCURRENCY} keep-alive connections included)
leases left held:    ${leasesHeld} (every run left paused, ${checkedRuns}, was replayed and answered)
${examples.length > 0 ? `examples:\n  ${examples.join("\n  ")}` : ""}`);
