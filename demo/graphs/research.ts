import { z } from "zod";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { defineClientSettings } from "chat-serve";
import { ScriptedChatModel } from "chat-serve/testing";

/** What a client may set per request, in `metadata.graph_runtime_settings`. */
export const ResearchSettings = defineClientSettings(
  z.strictObject({
    depth: z.int().min(1).max(5).default(2).describe("How many sources to consult (1-5)."),
    audience: z.enum(["general", "expert", "child"]).default("general").describe("Who the answer is written for."),
  }),
);

type Settings = z.output<typeof ResearchSettings.schema>;

const STYLE: Record<Settings["audience"], string> = {
  general: "in plain words",
  expert: "with the technical detail an expert expects",
  child: "simply enough for a child",
};

function topicOf(text: string): string {
  return text.trim().replace(/[?.!]+$/u, "") || "your question";
}

// The settings arrive as the run's typed runtime context; nodes read `runtime.context`.
export const graph = new StateGraph(MessagesAnnotation, ResearchSettings.schema)
  .addNode("answer", async (state, runtime) => {
    const { depth, audience } = runtime.context as Settings;
    const topic = topicOf(state.messages.at(-1)?.text ?? "");
    const model = new ScriptedChatModel({
      respond: () =>
        `I looked at ${depth} source${depth === 1 ? "" : "s"} about ${topic} and explain it ${STYLE[audience]}.`,
    });
    return { messages: [await model.invoke(state.messages, runtime)] };
  })
  .addEdge(START, "answer")
  .addEdge("answer", END)
  .compile();
