import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "chat-serve/testing";

// A scripted chat model, so the project runs with no API key. To use a real provider:
//   npm install @langchain/openai
//   import { ChatOpenAI } from "@langchain/openai";
//   const model = new ChatOpenAI({ model: "gpt-4o-mini" });   // reads OPENAI_API_KEY
const model = new ScriptedChatModel({
  respond: (messages) => `Hello! You said: ${messages.at(-1)?.text ?? ""}`,
});

export const graph = new StateGraph(MessagesAnnotation)
  // Passing `config` on lets chat-serve stream tokens, count usage and stop the call when
  // the client disconnects.
  .addNode("respond", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
