import { defineConfig } from "chat-serve";

// The bench's `--workers` case: the demo echo graph with the shared backends `--workers` needs
// (a Postgres checkpointer and a Redis coordinator, those of the test suite by default).
export default defineConfig({
  server: { host: "127.0.0.1", port: 0, prefix: "/v1" },
  checkpointer: {
    kind: "postgres",
    url: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    schema: "chat_serve_bench",
  },
  coordinator: { kind: "redis", url: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379", keyPrefix: "chat-serve-bench:" },
  graphs: {
    echo: { graph: "../demo/graphs/echo.ts:graph", description: "Echo", streamableNodeNames: ["respond"] },
  },
});
