import { defineConfig } from "chat-serve";

// The models this project serves. `npx chat-serve start` reads this file;
// `npx chat-serve models` checks it without serving.
export default defineConfig({
  server: { host: "127.0.0.1", port: 8000, prefix: "/v1" },
  graphs: {
    assistant: {
      graph: "./graphs/assistant.ts:graph",
      description: "A friendly assistant (scripted until you plug in a real model).",
      streamableNodeNames: ["respond"],
    },
  },
});
