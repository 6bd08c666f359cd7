// The same graph on the LangGraph.js API server (`langgraphjs dev` from @langchain/langgraph-cli,
// a dev dependency), started by the bench with a langgraph.json that points at the demo echo
// graph: stateless runs (`POST /runs/wait`) against chat-serve's complete chat completions, at
// 10 connections, alternating rounds. CPU is the server's whole process tree.

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import { compare } from "./lib/load.js";
import { ROOT, type Server, startCommand, startTarget } from "./lib/processes.js";
import { fixed, type Row, row } from "./lib/results.js";
import { chatBody, PROMPT } from "./lib/shared.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `langgraphjs dev` serving `graph` (a path from the repository's root, `file.ts:export`) as
 * `echo`, with `jobs` runs at a time (its default is 10) and `env` for the graph.
 */
export async function startLangGraph(graph: string, options: { jobs?: number; env?: Record<string, string> } = {}): Promise<Server> {
  const cli = createRequire(import.meta.url).resolve("@langchain/langgraph-cli/dist/cli/cli.mjs");
  // The server resolves graph paths against its config's folder (an absolute path is not
  // taken as one) and writes its state and a .gitignore there: a folder of its own, in the
  // repository so that the graph's imports resolve.
  const folder = path.join(ROOT, "node_modules/.cache/chat-serve-bench-langgraph");
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "langgraph.json"), JSON.stringify({ graphs: { echo: `../../../${graph}` } }));
  const port = await freePort();
  return startCommand(
    [
      process.execPath,
      cli,
      "dev",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--no-browser",
      "--no-reload",
      "--n-jobs-per-worker",
      String(options.jobs ?? 10),
      "--config",
      "langgraph.json",
    ],
    {
      cwd: folder,
      url: `http://127.0.0.1:${port}`,
      ready: /Server running at/u,
      env: { LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false", NO_COLOR: "1", ...options.env },
    },
  );
}

export async function langgraphApi(): Promise<Row[]> {
  const langgraph = await startLangGraph("demo/graphs/echo.ts:graph");
  const served = await startTarget("chat-serve");
  try {
    const result = await compare(
      {
        server: langgraph,
        load: {
          url: `${langgraph.url}/runs/wait`,
          body: { assistant_id: "echo", input: { messages: [{ role: "user", content: PROMPT }] } },
        },
      },
      {
        server: served,
        load: { url: `${served.url}/v1/chat/completions`, body: chatBody(false) },
      },
      10,
    );
    const area = "vs LangGraph API server";
    return [
      row(
        area,
        "complete, 10 connections: throughput",
        `${Math.round(result.served.requests)} req/s`,
        `${Math.round(result.baseline.requests)} req/s`,
        result.throughput.ratio,
        undefined,
        [result.throughput.low, result.throughput.high],
      ),
      row(
        area,
        "latency p50 / p99",
        `${result.served.p50} / ${result.served.p99} ms`,
        `${result.baseline.p50} / ${result.baseline.p99} ms`,
        result.served.p50 / result.baseline.p50,
      ),
      row(
        area,
        "server CPU per request",
        `${fixed(result.served.cpuMs * 1000, 0)} µs`,
        `${fixed(result.baseline.cpuMs * 1000, 0)} µs`,
        result.served.cpuMs / result.baseline.cpuMs,
      ),
    ];
  } finally {
    await Promise.all([langgraph.stop(), served.stop()]);
  }
}
