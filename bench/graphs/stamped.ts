import { appendFileSync } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

// The background bench's graph: notes when each run starts (its input and the time), then
// answers at once, so the bench measures the path to the graph and not the graph.
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => {
    const input = state.messages.at(-1)?.text ?? "";
    if (process.env.BENCH_START_LOG !== undefined) appendFileSync(process.env.BENCH_START_LOG, `${input} ${Date.now()}\n`);
    return { messages: [new AIMessage(`started: ${input}`)] };
  })
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
