import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "chat-serve/testing";

// The open-streams graph of the `agent` section: the demo echo, its words BENCH_CHUNK_DELAY_MS
// apart (default 250), so that many streams are open at once.
const model = new ScriptedChatModel({
  respond: (messages) => messages.at(-1)?.text ?? "",
  chunkDelayMs: Number(process.env.BENCH_CHUNK_DELAY_MS ?? 250),
});

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
