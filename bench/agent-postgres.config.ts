import { defineConfig } from "chat-serve";

// The bench's Agent Protocol case on shared backends: checkpoints, threads, runs and LangGraph's
// store in Postgres, leases in Redis (those of the test suite by default).
export default defineConfig({
  server: { host: "127.0.0.1", port: 0, prefix: "/v1", playground: false, mcp: false, a2a: false },
  checkpointer: {
    kind: "postgres",
    url: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    schema: "chat_serve_bench_agent",
  },
  coordinator: { kind: "redis", url: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379", keyPrefix: "chat-serve-bench-agent:" },
  graphs: {
    echo: { graph: "../demo/graphs/echo.ts:graph", description: "Echo", streamableNodeNames: ["respond"] },
    slow: { graph: "./graphs/slow-echo.ts:graph", description: "Echo, a word at a time", streamableNodeNames: ["respond"] },
  },
});
