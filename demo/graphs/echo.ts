import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "chat-serve/testing";

// A fake chat model (LangChain's real interface): it streams the last user message back
// word by word and reports usage like a provider would.
const model = new ScriptedChatModel({
  respond: (messages) => {
    const last = [...messages].reverse().find((message) => message.type === "human");
    const text = typeof last?.content === "string" ? last.content : (last?.text ?? "");
    return text.trim() === "" ? "(nothing to echo)" : text;
  },
});

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
