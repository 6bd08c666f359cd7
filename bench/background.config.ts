import { defineConfig } from "chat-serve";

// The bench's background case: two processes sharing the queue (BullMQ on Redis) and the
// store (Postgres), those of the test suite by default.
export default defineConfig({
  server: { host: "127.0.0.1", port: 0, prefix: "/v1" },
  checkpointer: {
    kind: "postgres",
    url: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    schema: "chat_serve_bench_background",
  },
  coordinator: { kind: "redis", url: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379", keyPrefix: "chat-serve-bench:" },
  background: { concurrency: 16, keyPrefix: "chat-serve-bench-background" },
  graphs: {
    stamped: { graph: "./graphs/stamped.ts:graph", description: "notes when each run starts" },
  },
});
