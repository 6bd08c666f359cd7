import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { eventually } from "./eventually.js";

/** A free loopback TCP port (free when asked; a test binds it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a redis-server of the test's own on the port and waits until it answers. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  await eventually(
    async () => {
      const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
      probe.on("error", () => {});
      try {
        await probe.connect();
        await probe.ping();
      } finally {
        probe.disconnect();
      }
    },
    10_000,
    50,
  );
  return child;
}
