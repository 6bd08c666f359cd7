import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { typedText, withRequestParameters } from "chat-serve";
import { ScriptedChatModel } from "chat-serve/testing";

// A fake chat model (LangChain's real interface): it streams the last user message back
// word by word and reports usage like a provider would. The request's parameters apply to it:
// it stops after max_tokens words (finish_reason "length") and before a `stop` sequence.
const model = new ScriptedChatModel({
  respond: (messages) => {
    const last = [...messages].reverse().find((message) => message.type === "human");
    const text = typeof last?.content === "string" ? last.content : (last?.text ?? "");
    // The message as sent, unless a coding agent added its context to it: then what the person typed.
    const typed = typedText(last);
    if (typed === "") return "(nothing to echo)";
    return typed === text.trim() ? text : typed;
  },
});

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (state, config) => ({
    messages: [await withRequestParameters(model, config).invoke(state.messages, config)],
  }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
