import { defineConfig } from "chat-serve";

// The demo models of this repository. They need no API key and no external service:
// `npm start` serves them on http://127.0.0.1:8000/v1.
export default defineConfig({
  // The OpenAI APIs under /v1 (and useChat's stream at /v1/ai-sdk/{model}, AG-UI at /v1/ag-ui/{model}, the
  // Anthropic Messages API at /v1/messages); the LangGraph Agent Protocol (the LangGraph SDK, useStream) at the root.
  server: { host: "127.0.0.1", port: 8000, prefix: "/v1", langgraph: true, aiSdk: true, agUi: true, anthropic: true },
  // Interrupt runs, threads and stored responses live in this process's memory. For several
  // processes, see docs/production.md ("Several processes and hosts").
  checkpointer: { kind: "memory" },
  coordinator: { kind: "memory" },
  graphs: {
    echo: {
      graph: "./demo/graphs/echo.ts:graph",
      description: "Streams your last message back, word by word, and reports token usage; honours max_tokens and stop.",
      streamableNodeNames: ["respond"],
    },
    plain: {
      graph: "./demo/graphs/plain.ts:graph",
      description: "Answers with a fixed sentence from a node that returns an AIMessage directly.",
    },
    research: {
      graph: "./demo/graphs/research.ts:graph",
      description: "Answers a research question with status and progress events; clients choose the depth (1-5) and the audience.",
      streamableNodeNames: ["answer"],
      features: ["CLIENT_EVENTS"],
      clientSettings: "./demo/graphs/research.ts:ResearchSettings",
    },
    approval: {
      graph: "./demo/graphs/approval.ts:graph",
      description: "Asks for your approval (a graph_interrupt tool call) before it answers.",
      features: ["INTERRUPTS"],
    },
    tools: {
      graph: "./demo/graphs/tools.ts:graph",
      description: "Asks the client to call a get_weather tool, then answers from its result.",
      streamableNodeNames: ["agent"],
    },
    think: {
      graph: "./demo/graphs/think.ts:graph",
      description: "Reasons for a few sentences (streamed as reasoning) before it answers; reasoning effort sets how long.",
      streamableNodeNames: ["think"],
    },
    memory: {
      graph: "./demo/graphs/memory.ts:graph",
      description: "Remembers the conversation on a thread: continue it with previous_response_id, a conversation, or a chat session.",
      streamableNodeNames: ["respond"],
      threads: true,
    },
  },
  // A model that runs research with fixed settings: for clients that cannot send settings.
  presets: {
    "research-deep": {
      from: "research",
      settings: { depth: 5 },
      description: "Research with depth 5, for clients that cannot send settings.",
    },
  },
  // The same models for chat UIs such as Open WebUI: http://127.0.0.1:8000/ui/v1 (see docs/chat-frontends.md).
  profiles: { "chat-ui": { prefix: "/ui/v1" } },
});
