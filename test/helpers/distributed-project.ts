import { tempProject } from "./temp-project.js";

/** The graph module of the distributed tests: counts in Redis how often the node after the interrupt ran. */
export const COUNTING_GRAPH_MODULE = `
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Redis } from "ioredis";

const redis = new Redis(process.env.COUNTER_REDIS_URL);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("ask", async () => {
    const answer = interrupt({ question: "Proceed?" });
    // Holds the run (and its lease) after the answer, before the node finishes; says so in Redis.
    const hold = Number(process.env.HOLD_AFTER_ANSWER_MS ?? 0);
    if (hold > 0) {
      await redis.set(process.env.COUNTER_KEY + ":holding", "1");
      await sleep(hold);
    }
    return { messages: [new AIMessage("answer: " + JSON.stringify(answer))] };
  })
  .addNode("after", async () => {
    await sleep(100);
    await redis.incr(process.env.COUNTER_KEY);
    return { messages: [new AIMessage("done")] };
  })
  .addEdge(START, "ask").addEdge("ask", "after").addEdge("after", END)
  .compile();
`;

export interface DistributedProjectOptions {
  coordinator: string;
  schema: string;
  postgresUrl: string;
  /** More top-level config keys, as source text (`metrics: { enabled: true },`). */
  extraConfig?: string;
}

/** A project whose interrupt graph uses the Postgres checkpointer and the given coordinator. */
export function distributedProject(options: DistributedProjectOptions) {
  return tempProject({
    "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(options.postgresUrl)}, schema: ${JSON.stringify(options.schema)} },
  coordinator: ${options.coordinator},
  ${options.extraConfig ?? ""}
  ${
    // Its own queue on the shared Redis: a server of another test must never take its jobs.
    options.extraConfig?.includes("background:") === true ? "" : `background: { keyPrefix: ${JSON.stringify(`cs-bg-${options.schema}`)} },`
  }
  graphs: {
    counter: { graph: "./graph.ts:graph", description: "counts", features: ["INTERRUPTS"] },
    echo: { graph: "./echo.ts:graph", description: "echo" },
  },
};`,
    "graph.ts": COUNTING_GRAPH_MODULE,
    "echo.ts": `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { AIMessage } from "@langchain/core/messages";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => ({ messages: [new AIMessage("echo: " + state.messages.at(-1).text)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
`,
  });
}
