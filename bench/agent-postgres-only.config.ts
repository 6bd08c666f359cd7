import { defineConfig } from "chat-serve";

// The baseline of the price of sharing: the same checkpoints, threads and runs in Postgres as
// bench/agent-postgres.config.ts, but no Redis, so each run runs in the process its client reached.
export default defineConfig({
  server: { host: "127.0.0.1", port: 0, prefix: "/v1", playground: false, mcp: false, a2a: false },
  checkpointer: {
    kind: "postgres",
    url: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    schema: "chat_serve_bench_agent_local",
  },
  graphs: {
    echo: { graph: "../demo/graphs/echo.ts:graph", description: "Echo", streamableNodeNames: ["respond"] },
  },
});
