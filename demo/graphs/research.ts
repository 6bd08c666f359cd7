import { setTimeout as sleep } from "node:timers/promises";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { clientEvent, defineClientSettings, statusEvent } from "chat-serve";
import { ScriptedChatModel } from "chat-serve/testing";
import { z } from "zod";

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
const NAMESPACE = ["research"];
const READ_MS = 200;

function topicOf(text: string): string {
  return text.trim().replace(/[?.!]+$/u, "") || "your question";
}

// The settings arrive as the run's typed runtime context; nodes read `runtime.context`.
// Status, progress and artifact events reach clients that opt in with
// metadata.graph_stream_events = "v1".
export const graph = new StateGraph(MessagesAnnotation, ResearchSettings.schema)
  .addNode("search", async (_state, runtime) => {
    const { depth } = runtime.context as Settings;
    statusEvent(`Searching ${depth} source${depth === 1 ? "" : "s"}`, { namespace: NAMESPACE });
    for (let completed = 1; completed <= depth; completed += 1) {
      // Reading a source takes a moment (and stops when the run is cancelled).
      await sleep(READ_MS, undefined, { signal: runtime.signal });
      clientEvent("progress", { stage: "search", completed, total: depth, message: `Read source ${completed}` }, NAMESPACE);
    }
    return {};
  })
  .addNode("answer", async (state, runtime) => {
    const { depth, audience } = runtime.context as Settings;
    statusEvent("Writing the answer", { namespace: NAMESPACE });
    const topic = topicOf(state.messages.at(-1)?.text ?? "");
    const model = new ScriptedChatModel({
      respond: () => `I looked at ${depth} source${depth === 1 ? "" : "s"} about ${topic} and explain it ${STYLE[audience]}.`,
    });
    const reply = await model.invoke(state.messages, runtime);
    clientEvent("artifact", { id: "notes-1", title: `Notes on ${topic}`, url: "https://example.com/notes/1" }, NAMESPACE);
    statusEvent("Research complete", { done: true, namespace: NAMESPACE });
    // Cite the sources on the text block; chat-serve returns it as a url_citation annotation.
    // Indices count code points of the block, end inclusive. Keeping the streamed reply's id
    // tells LangGraph this is the message it already streamed.
    const phrase = `${depth} source${depth === 1 ? "" : "s"}`;
    const start = Array.from(reply.text.slice(0, reply.text.indexOf(phrase))).length;
    const citation = {
      type: "citation",
      url: "https://example.com/sources",
      title: "Sources consulted",
      start_index: start,
      end_index: start + Array.from(phrase).length - 1,
      cited_text: phrase,
    };
    const cited = new AIMessage({
      id: reply.id,
      content: [{ type: "text", text: reply.text, annotations: [citation] }] as never,
      usage_metadata: reply.usage_metadata,
    });
    return { messages: [cited] };
  })
  .addEdge(START, "search")
  .addEdge("search", "answer")
  .addEdge("answer", END)
  .compile();
