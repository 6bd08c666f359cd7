import { defineConfig } from "chat-serve";

// The bench's Agent Protocol case on the embedded default: the demo echo graph, in memory.
export default defineConfig({
  server: { host: "127.0.0.1", port: 0, prefix: "/v1", playground: false, mcp: false, a2a: false },
  graphs: {
    echo: { graph: "../demo/graphs/echo.ts:graph", description: "Echo", streamableNodeNames: ["respond"] },
    slow: { graph: "./graphs/slow-echo.ts:graph", description: "Echo, a word at a time", streamableNodeNames: ["respond"] },
  },
});
