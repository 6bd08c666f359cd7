import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { typedText } from "chat-serve";
import { ScriptedChatModel } from "chat-serve/testing";

// A stateful graph, compiled as LangGraph's tutorials compile one, minus the checkpointer:
// the config's `threads: true` gives it the server's. Its fake model answers from the whole
// thread, so it shows what the conversation remembers: each turn sends only what is new.
const model = new ScriptedChatModel({
  respond: (messages) => {
    const said = messages.filter((message) => message.type === "human").map((message) => typedText(message));
    const last = said.at(-1) ?? "";
    if (said.length <= 1) return `You said "${last}". This is the start of our conversation.`;
    return `You said "${last}". Before that you said: ${said
      .slice(0, -1)
      .map((text) => `"${text}"`)
      .join(", ")}.`;
  },
});

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
