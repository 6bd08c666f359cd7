import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

// No model and no streamable nodes: the node returns an AIMessage directly, and a stream
// carries it as one text delta.
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("answer", (state) => {
    const count = state.messages.filter((message) => message.type === "human").length;
    return { messages: [new AIMessage(`This is a plain answer. You have sent ${count} message${count === 1 ? "" : "s"}.`)] };
  })
  .addEdge(START, "answer")
  .addEdge("answer", END);
