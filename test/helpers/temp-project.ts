import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Inside the repository, so config files can import "chat-serve" and LangGraph from it.
const root = fileURLToPath(new URL("../.tmp/", import.meta.url));

/** A throwaway folder with the given files; remove it with `cleanup()`. */
export function tempProject(files: Record<string, string>): { dir: string; cleanup: () => void } {
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(path.join(root, "project-"));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A tiny graph module for config tests. */
export const ECHO_GRAPH_MODULE = `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { AIMessage } from "@langchain/core/messages";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => ({ messages: [new AIMessage("echo: " + state.messages.at(-1).text)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
export const builder = new StateGraph(MessagesAnnotation)
  .addNode("respond", () => ({ messages: [new AIMessage("from a builder")] }))
  .addEdge(START, "respond").addEdge("respond", END);
export async function makeGraph() { return graph; }
export const notAGraph = 42;
`;
