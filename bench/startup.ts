// Start to first 200: `chat-serve start` with the repository's demo config, timed from the
// spawn to the first answer of GET /v1/models. The first run starts with jiti's file cache
// emptied (cold); the others reuse it (warm). Run with `npm run bench:startup`.

import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const runs = Number(process.env.BENCH_STARTS ?? 5);

async function timeStart(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ["bin/chat-serve.js", "start", "--port", "0", "--quiet"], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
  });
  try {
    let output = "";
    const baseURL = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (data: Buffer) => {
        output += data.toString();
        const match = /ready (http:\/\/\S+)/u.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.on("exit", (code) => reject(new Error(`chat-serve exited with ${code}: ${output}`)));
    });
    for (;;) {
      const response = await fetch(`${baseURL}/models`).catch(() => undefined);
      if (response?.status === 200) return performance.now() - started;
    }
  } finally {
    child.kill("SIGKILL");
  }
}

rmSync(`${ROOT}node_modules/.cache/jiti`, { recursive: true, force: true });
const cold = await timeStart();
const warm: number[] = [];
for (let run = 0; run < runs; run += 1) warm.push(await timeStart());
warm.sort((a, b) => a - b);
console.table([
  { start: "cold (no transpile cache)", "ms to first 200": Math.round(cold) },
  { start: `warm (median of ${runs})`, "ms to first 200": Math.round(warm[Math.floor(runs / 2)]!) },
]);
