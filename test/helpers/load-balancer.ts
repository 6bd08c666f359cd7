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

/** What HAProxy answers when no replica is up at all: JSON both kinds of client read, never its HTML page. */
export const HAPROXY_503_FILE = `HTTP/1.0 503 Service Unavailable
Cache-Control: no-cache
Connection: close
Content-Type: application/json

{"detail":"No chat-serve replica is available right now; retry shortly.","error":{"message":"No chat-serve replica is available right now; retry shortly.","type":"server_error","param":null,"code":"server_unavailable"}}
`;

/**
 * The HAProxy configuration for `backends` (host:port each), listening on `port`: replicas
 * whose every backend answers (`/ready?strict=true`), and when none does (a Redis or Postgres
 * outage they share), the replicas that still serve what needs neither (`/ready`), so
 * chat-serve's own JSON 503 answers what needs the backend. `errorFile`: the JSON 503 above.
 */
export function haproxyConfig(port: number, backends: readonly string[], errorFile = "/etc/haproxy/errors/503.json.http"): string {
  const servers = backends.map((backend, index) => `  server replica${index} ${backend} check`).join("\n");
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
  use_backend replicas if { nbsrv(replicas) gt 0 }
  default_backend replicas_degraded

backend replicas
  balance roundrobin
  option httpchk GET /ready?strict=true
  http-check expect status 200
  default-server inter 300ms fall 1 rise 2
${servers}

backend replicas_degraded
  balance roundrobin
  option httpchk GET /ready
  http-check expect status 200
  default-server inter 300ms fall 1 rise 2
  errorfile 503 ${errorFile}
${servers}
`;
}

/** HAProxy in front of `backends`; `stop()` ends it and removes its files. */
export async function startHaproxy(backends: readonly string[]): Promise<{ origin: string; stop: () => Promise<void> }> {
  if (HAPROXY === undefined) throw new Error("HAProxy is not installed");
  const dir = mkdtempSync(path.join(tmpdir(), "chat-serve-haproxy-"));
  const port = await freePort();
  const file = path.join(dir, "haproxy.cfg");
  const errorFile = path.join(dir, "503.json.http");
  writeFileSync(errorFile, HAPROXY_503_FILE.replaceAll("\n", "\r\n"));
  writeFileSync(file, haproxyConfig(port, backends, errorFile));
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
