import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// The coding agents the suite drives as their users run them, installed from npm into
// test/clients (pinned, not dependencies of chat-serve; .ci/run installs them). Each run gets a
// fresh HOME, a dummy key, no network but the loopback server, and a deadline.

const BIN = fileURLToPath(new URL("../clients/node_modules/.bin/", import.meta.url));

/** A client's path, or the reason the tests that need it skip (with CI=true: fail). */
export function realClient(name: "claude" | "codex"): { bin: string; skip: string | false } {
  const bin = path.join(BIN, name);
  if (existsSync(bin)) return { bin, skip: false };
  const reason = `${name} is not installed: run \`npm ci --prefix test/clients\``;
  if (process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return { bin, skip: reason };
}

/** A throwaway HOME for one client, removed by `cleanup`. */
export function freshHome(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), "chat-serve-client-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a client to its end: its exit code, its standard output and error. */
export function runClient(
  bin: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
    });
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${path.basename(bin)} ${args.join(" ")} did not end in time:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`));
    }, options.timeoutMs ?? 60_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The graphs both coding agents are tested with, as a config's `graphs` entries: the coding
 * fixture (`coder`, `recaller`) and the demo's `approval` and `think`.
 */
export function codingAgentGraphs(): string {
  const at = (relative: string) => new URL(relative, import.meta.url).pathname;
  return `{
    coder: { graph: "${at("../fixtures/coding-agent.ts")}:coder", description: "Runs what it is told to" },
    approval: { graph: "${at("../../demo/graphs/approval.ts")}:graph", description: "Asks first", features: ["INTERRUPTS"] },
    think: { graph: "${at("../../demo/graphs/think.ts")}:graph", description: "Thinks first", streamableNodeNames: ["think"] },
    recaller: { graph: "${at("../fixtures/coding-agent.ts")}:recaller", description: "Says back, knows a summary" },
  }`;
}
