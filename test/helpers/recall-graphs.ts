import type { BaseMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, END, type MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";

/** Every user message of a history, joined: what a recalling graph says it remembers. */
export const said = (messages: BaseMessage[]) =>
  messages
    .filter((message) => message.type === "human")
    .map((message) => message.text)
    .join(" | ");

/**
 * The LangGraph tutorial's chatbot, whose scripted model answers `I remember: <every user
 * message of its state>`: a test sees exactly what its thread (or its input) holds. With a
 * checkpointer it is stateful, as the tutorials compile it.
 */
export function recallGraph(checkpointer?: BaseCheckpointSaver) {
  const model = new ScriptedChatModel({ respond: (messages) => `I remember: ${said(messages)}` });
  return new StateGraph(MessagesAnnotation)
    .addNode("chatbot", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addEdge(START, "chatbot")
    .addEdge("chatbot", END)
    .compile(checkpointer === undefined ? {} : { checkpointer });
}

/** How many threads a MemorySaver holds. */
export const threadCount = (saver: MemorySaver) => Object.keys((saver as unknown as { storage: Record<string, unknown> }).storage).length;
