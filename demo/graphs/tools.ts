import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "chat-serve/testing";

// The final assistant message carries a tool call for the client to run: the answer is
// `finish_reason: "tool_calls"`. Given the tool's result, the model answers in text.
const model = new ScriptedChatModel({
  respond: (messages) => {
    const last = messages.at(-1);
    if (last?.type === "tool") return `The weather tool says: ${last.text}`;
    const question = last?.text ?? "";
    const city = /in ([A-Z][\w -]*)/u.exec(question)?.[1]?.trim() ?? "Paris";
    return { text: "", toolCalls: [{ name: "get_weather", args: { city } }] };
  },
});

export function graph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile();
}
