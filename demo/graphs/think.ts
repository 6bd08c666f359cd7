import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { typedText, withRequestParameters } from "chat-serve";
import { ScriptedChatModel } from "chat-serve/testing";

// A scripted reasoning model: it reasons for a few sentences (streamed as reasoning, the way
// DeepSeek-R1, Qwen3 or gpt-oss stream theirs), then answers. The reasoning effort a client
// asks for sets how long it thinks: `none` skips it, `low` is one sentence, `high` all four.
const THOUGHTS = [
  "The user asked something; let me restate it to be sure I read it right.",
  "A short answer serves best, so I will keep it to one sentence.",
  "Nothing here needs a tool or a source.",
  "I will answer plainly and mention that I thought about it first.",
];
const SENTENCES_BY_EFFORT: Record<string, number> = { none: 0, minimal: 1, low: 1, medium: 3, high: 4, xhigh: 4 };

const model = new ScriptedChatModel({
  respond: (messages, options) => {
    const question = typedText([...messages].reverse().find((message) => message.type === "human")) || "your question";
    const sentences = SENTENCES_BY_EFFORT[options.reasoning?.effort ?? "medium"] ?? 3;
    return {
      reasoning: THOUGHTS.slice(0, sentences).join(" "),
      text: `I thought about "${question}" and my answer is: yes, that can be done.`,
    };
  },
});

export const graph = new StateGraph(MessagesAnnotation)
  // The client's reasoning effort (and max_tokens, stop) reach the model through
  // withRequestParameters; a node can read them itself with requestParameters(config).
  .addNode("think", async (state, config) => ({
    messages: [await withRequestParameters(model, config).invoke(state.messages, config)],
  }))
  .addEdge(START, "think")
  .addEdge("think", END)
  .compile();
