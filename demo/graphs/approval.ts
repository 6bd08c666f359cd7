import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { typedText } from "chat-serve";

// Human in the loop: the graph pauses with a question. The client receives it as a
// `graph_interrupt` tool call and answers with a tool message; the graph then finishes with
// an answer that reflects the reply. chat-serve gives it the configured checkpointer.
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("ask", (state) => {
    // What the person asked, without the context a coding agent adds to the turn.
    const request = typedText(state.messages.findLast((message) => message.type === "human")) || "the request";
    const reply = interrupt({ question: `May I go ahead with: ${request}?`, options: ["approve", "reject"] });
    const text = typeof reply === "string" ? reply : JSON.stringify(reply);
    const approved = /^(approve|approved|yes|ok)\b/iu.test(text.trim());
    return {
      messages: [
        new AIMessage(approved ? `Approved: going ahead with ${request}.` : `Not approved (you said "${text}"): I will not do ${request}.`),
      ],
    };
  })
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();
