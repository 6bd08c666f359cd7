import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/chat-serve.js", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI (the compiled one, as users get it) to completion. */
export async function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; bin?: string; node?: string } = {},
): Promise<CliResult> {
  const child = spawn(options.node ?? process.execPath, [options.bin ?? BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

export interface RunningServer {
  child: ChildProcessWithoutNullStreams;
  /** The base URL printed on the `ready` line, prefix included. */
  baseURL: string;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** How long `stop()` waits for the server to exit before it fails the test. */
const STOP_TIMEOUT_MS = 20_000;

/**
 * Starts `chat-serve start` (this checkout's, or `bin`) and waits for its `ready` line. On a
 * free port (`--port 0`) unless `ownPort` leaves the port to the config, the environment or `args`.
 */
export async function startCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; ownPort?: boolean; bin?: string; node?: string } = {},
): Promise<RunningServer> {
  const child = spawn(
    options.node ?? process.execPath,
    [options.bin ?? BIN, "start", ...(options.ownPort === true ? [] : ["--port", "0"]), ...args],
    {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, NO_COLOR: "1", LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn", ...options.env },
    },
  );
  let output = "";
  const baseURL = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chat-serve did not start:\n${output}`)), 20_000);
    const onData = (data: Buffer) => {
      output += data.toString();
      const match = /ready (http:\/\/\S+)/u.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`chat-serve exited with ${code}:\n${output}`)));
  });
  return { child, baseURL, output: () => output, stop: stopper(child, () => output) };
}

/**
 * A stop function for a CLI child: sends the signal and waits for the exit. A process that does
 * not exit fails the test with its own log, rather than hanging it until the suite's timeout
 * says nothing about where.
 */
function stopper(child: ChildProcessWithoutNullStreams, output: () => string) {
  return async (signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> => {
    // Already gone, by exiting or by a signal: its "exit" event has been emitted.
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = once(child, "exit");
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`chat-serve did not exit within ${STOP_TIMEOUT_MS / 1000} s of ${signal}:\n${output()}`));
      }, STOP_TIMEOUT_MS);
    });
    try {
      const [code] = (await Promise.race([exited, stuck])) as [number | null];
      return code;
    } finally {
      clearTimeout(timer);
    }
  };
}

export interface RunningWorker {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Starts `chat-serve worker` and waits for its `ready` line. */
export async function startWorker(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunningWorker> {
  const child = spawn(process.execPath, [BIN, "worker", ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: "1", LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn", ...options.env },
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chat-serve worker did not start:\n${output}`)), 20_000);
    const onData = (data: Buffer) => {
      output += data.toString();
      if (/ready taking background runs/u.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`chat-serve worker exited with ${code}:\n${output}`)));
  });
  return { child, output: () => output, stop: stopper(child, () => output) };
}
