// Processes the bench starts and measures: bench targets, `chat-serve start`, the LangGraph
// API server. CPU time is read from /proc for a process and all its descendants.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Every core of the machine (not only those this process may use once it is pinned). */
const CORES = cpus().length;

/** CPU pinning: servers on core 0, the load generator (this process) on the others. */
const pinning = (() => {
  if (process.platform !== "linux" || CORES < 2) return undefined;
  try {
    execFileSync("taskset", ["-a", "-cp", `1-${CORES - 1}`, String(process.pid)], { stdio: "ignore" });
    return { server: ["taskset", "-c", "0"] };
  } catch {
    return undefined;
  }
})();

/** Lets this process run on every core (`true`) or only on the load generator's (`false`). */
export function spreadLoadGenerator(everyCore: boolean): void {
  if (pinning === undefined) return;
  const cores = everyCore ? `0-${CORES - 1}` : `1-${CORES - 1}`;
  execFileSync("taskset", ["-a", "-cp", cores, String(process.pid)], { stdio: "ignore" });
}

export function describePinning(): string {
  return pinning === undefined
    ? "servers and load generator share every core (no taskset or one core)"
    : `servers pinned to core 0, the load generator (autocannon) to cores 1-${CORES - 1}`;
}

/** The command line of a process, pinned to the server core when `pin` is set. */
export function command(argv: string[], pin: boolean): [string, string[]] {
  const full = pin && pinning !== undefined ? [...pinning.server, ...argv] : argv;
  return [full[0]!, full.slice(1)];
}

/** Waits for a line of the child's output that matches, or fails when it exits first. */
function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (data: Buffer) => {
      output += data.toString();
      const match = pattern.exec(output);
      if (match !== null) finish(undefined, match);
    };
    const onExit = (code: number | null) => finish(new Error(`exited with ${code} before it was ready:\n${output}`));
    function finish(error: Error | undefined, match?: RegExpExecArray) {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      if (error === undefined) resolve(match!);
      else reject(error);
    }
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", onExit);
  });
}

export interface Server {
  url: string;
  pid: number;
  /** CPU milliseconds used so far by the process and its descendants. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export interface Target extends Server {
  memory(): Promise<{ heapUsed: number; rss: number; maxRss: number }>;
  /** Starts the event-loop delay reading again. */
  resetLoopDelay(): Promise<void>;
  /** How late the event loop ran timers since the last reset, in ms. */
  loopDelay(): Promise<LoopDelay>;
  /** The garbage collections since the last call (or the start), by kind: how many and their pauses in ms. */
  collections(): Promise<Collections>;
}

/** Garbage collections by kind (minor, major, …): how many, and their pauses in ms. */
export type Collections = Record<string, { count: number; ms: number }>;

export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/** A bench target (`bench/target.ts`): the floor or chat-serve serving the echo graph. */
export async function startTarget(
  side: "floor" | "chat-serve" | "production",
  options: { graph?: "slow" | "provider"; nodeOptions?: string[] } = {},
): Promise<Target> {
  const [file, args] = command(
    [
      process.execPath,
      "--expose-gc",
      ...(options.nodeOptions ?? []),
      "--import",
      "tsx",
      "bench/target.ts",
      side,
      ...(options.graph ? [options.graph] : []),
    ],
    true,
  );
  const child = spawn(file, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe", "ipc"] });
  const [, url] = await waitForOutput(child, /listening (\S+)\n/u);
  const server = wrap(child, url!);
  /** One IPC question to the target and its answer. */
  const ask = async <T>(message: string): Promise<T> => {
    child.send(message);
    const [reply] = await once(child, "message");
    return reply as T;
  };
  return {
    ...server,
    memory: () => ask<{ heapUsed: number; rss: number; maxRss: number }>("memory"),
    resetLoopDelay: async () => {
      await ask("loop-reset");
    },
    loopDelay: () => ask<LoopDelay>("loop"),
    collections: () => ask<Collections>("gc"),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.send("exit");
      await exited;
    },
  };
}

/**
 * A server command, ready once its output matches `ready`. Its address is `url`, or else
 * the first group of `ready`. Pinned to the server core unless `pin` is false.
 */
async function startServer(
  argv: string[],
  options: { ready: RegExp; url?: string; cwd?: string; env?: Record<string, string>; pin?: boolean; timeoutMs?: number },
): Promise<Server> {
  const [file, rest] = command(argv, options.pin ?? true);
  const child = spawn(file, rest, { cwd: options.cwd ?? ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  const [, address] = await waitForOutput(child, options.ready, options.timeoutMs);
  return wrap(child, options.url ?? address!);
}

/** `chat-serve start` with the given arguments, until it prints its address. */
export function startChatServe(args: string[], options: { pin?: boolean } = {}): Promise<Server> {
  return startServer([process.execPath, "bin/chat-serve.js", "start", "--port", "0", "--quiet", ...args], {
    ready: /ready (http:\/\/\S+)/u,
    env: { NO_COLOR: "1" },
    ...options,
  });
}

/** The loopback model provider (bench/provider.ts), beside the load generator (not on the server core). */
export function startProvider(env: Record<string, string>): Promise<Server> {
  return startServer([process.execPath, "--import", "tsx", "bench/provider.ts"], { ready: /listening (\S+)\n/u, env, pin: false });
}

/** Any server command whose address is known beforehand. */
export function startCommand(
  argv: string[],
  options: { cwd: string; url: string; ready: RegExp; env?: Record<string, string> },
): Promise<Server> {
  return startServer(argv, { ...options, timeoutMs: 120_000 });
}

function wrap(child: ChildProcess, url: string): Server {
  // Keep reading so a chatty server never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    url,
    pid: child.pid!,
    cpuMs: () => processTreeCpuMs(child.pid!),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident memory of a process and every descendant, in bytes (Linux). */
export function processTreeRss(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      const match = /VmRSS:\s+(\d+) kB/u.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      total += Number(match?.[1] ?? 0) * 1024;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** A process and its descendants. */
function processTree(root: number): number[] {
  const parents = readParents();
  return [...parents.keys()].filter((pid) => {
    for (let cursor: number | undefined = pid; cursor !== undefined && cursor > 1; cursor = parents.get(cursor)) {
      if (cursor === root) return true;
    }
    return false;
  });
}

function readParents(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended meanwhile.
    }
  }
  return parents;
}

const TICKS_PER_SECOND = 100;

/** utime + stime of a process and every descendant, in milliseconds (Linux). */
function processTreeCpuMs(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    try {
      // The command name is in parentheses and may hold spaces; the fields after it are fixed.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
