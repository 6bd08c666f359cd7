import assert from "node:assert/strict";
import { after, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { loadConfig } from "../../src/config/load-config.js";
import { tsconfigAliases } from "../../src/config/module-loader.js";
import { registryFromConfig } from "../../src/server/from-config.js";
import { tempProject } from "../helpers/temp-project.js";

// A LangGraph.js project whose modules import each other through tsconfig `paths` (the
// generative-UI and supervisor templates' `@/*`), with the tsconfig's comments, its `extends`
// and its `baseUrl`, served as `langgraphjs dev` serves it.

const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

const GRAPH = `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { AIMessage } from "@langchain/core/messages";
import { shout } from "@/utils/format";
import { SUFFIX } from "~consts";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => ({ messages: [new AIMessage(shout(state.messages.at(-1)?.text ?? "") + SUFFIX)] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
`;

test("imports through tsconfig paths resolve: a wildcard pattern, an exact one, under extends and baseUrl", async () => {
  const project = tempProject({
    "langgraph.json": JSON.stringify({ graphs: { agent: "./src/agent/graph.ts:graph" } }),
    // JSONC, as TypeScript reads it: comments and trailing commas.
    "tsconfig.base.json": `{
  // the shared settings
  "compilerOptions": {
    "baseUrl": ".",
    "paths": { "@/*": ["./src/*"], "~consts": ["./src/consts.ts"], },
  },
}`,
    "tsconfig.json": `{ "extends": "./tsconfig.base.json", "compilerOptions": { "strict": true } }`,
    "src/agent/graph.ts": GRAPH,
    "src/utils/format.ts": `export const shout = (text: string) => text.toUpperCase();`,
    "src/consts.ts": `export const SUFFIX = "!";`,
  });
  cleanups.push(project.cleanup);
  const aliases = tsconfigAliases(project.dir);
  assert.equal(aliases["@/"], `${project.dir}/src/`);
  assert.equal(aliases["~consts"], `${project.dir}/src/consts.ts`);
  const registry = await registryFromConfig(await loadConfig({ cwd: project.dir }));
  const graph = (await registry.resolveGraph("agent")) as unknown as {
    invoke(input: unknown, config: unknown): Promise<{ messages: { text: string }[] }>;
  };
  const state = await graph.invoke({ messages: [new HumanMessage("hello")] }, { configurable: { thread_id: "t1" } });
  assert.equal(state.messages.at(-1)?.text, "HELLO!");
});

test("a project without tsconfig paths has no aliases", () => {
  const project = tempProject({ "tsconfig.json": `{ "compilerOptions": { "strict": true } }` });
  cleanups.push(project.cleanup);
  assert.deepEqual(tsconfigAliases(project.dir), {});
});
