import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "./private-redis.js";

// A real load balancer in front of chat-serve replicas: Debian's HAProxy, round robin per
// request, health-checked on /ready, with the timeouts long streams and WebSockets need (the
// configuration docs/production.md shows). `.ci/run` installs it when missing.

const HAPROXY = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].find((candidate) => existsSync(candidate));

/** HAProxy's path, or why the tests that need it skip (with CI=true: fail). */
export function requireHaproxy(): { skip: string | false } {
  if (HAPROXY !== undefined) return { skip: false };
  const reason = "HAProxy is not installed (apt-get install -y haproxy)";
  if (process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return { skip: reason };
}

/** The HAProxy configuration for `backends` (host:port each), listening on `port`. */
export function haproxyConfig(port: number, backends: readonly string[]): string {
  return `global
  maxconn 1024

defaults
  mode http
  option http-server-close
  option redispatch
  retries 3
  timeout connect 2s
  timeout client 1h
  timeout server 1h
  timeout tunnel 1h
  timeout http-keep-alive 10s

frontend chat
  bind 127.0.0.1:${port}
  default_backend replicas

backend replicas
  balance roundrobin
  option httpchk GET /ready
  http-check expect status 200
  default-server inter 300ms fall 1 rise 2
${backends.map((backend, index) => `  server replica${index} ${backend} check`).join("\n")}
`;
}

/** HAProxy in front of `backends`; `stop()` ends it and removes its files. */
export async function startHaproxy(backends: readonly string[]): Promise<{ origin: string; stop: () => Promise<void> }> {
  if (HAPROXY === undefined) throw new Error("HAProxy is not installed");
  const dir = mkdtempSync(path.join(tmpdir(), "chat-serve-haproxy-"));
  const port = await freePort();
  const file = path.join(dir, "haproxy.cfg");
  writeFileSync(file, haproxyConfig(port, backends));
  const child: ChildProcess = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr?.on("data", (data: Buffer) => {
    errors += data.toString();
  });
  const origin = `http://127.0.0.1:${port}`;
  // Up once it answers through to a replica.
  for (let attempt = 0; ; attempt += 1) {
    const ok = await fetch(`${origin}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 100 || child.exitCode !== null) throw new Error(`HAProxy did not start:\n${errors}`);
    await sleep(50);
  }
  return {
    origin,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
