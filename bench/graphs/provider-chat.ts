import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";

// The `models` bench section's graph: one node whose real `ChatOpenAI` streams from the bench's
// loopback provider (bench/provider.ts, at BENCH_PROVIDER_URL), usage in the last chunk; the
// model name BENCH_PROVIDER_MODEL (`bench-<tokens>x<delay ms>`) tells the provider what to stream.
const model = new ChatOpenAI({
  model: process.env.BENCH_PROVIDER_MODEL ?? "bench-200x20",
  apiKey: "sk-bench-provider",
  configuration: { baseURL: process.env.BENCH_PROVIDER_URL },
  maxRetries: 0,
  streamUsage: true,
});

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
