import assert from "node:assert/strict";
import { after, test } from "node:test";
import OpenAI from "openai";
import { runCli, startCli } from "../helpers/cli.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";
import { tempProject } from "../helpers/temp-project.js";

// The embedded background queue with a Postgres store: a server killed while a background
// response runs leaves it `in_progress` in the store; the next start marks it failed, saying
// why, so no client polls it forever.

const postgres = await requirePostgres();
const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("after kill -9 and a restart, the unfinished background response reads failed", { skip: postgres.skip, timeout: 60_000 }, async () => {
  const schema = uniqueSchema();
  cleanups.push(() => dropSchema(schema));
  const project = tempProject({
    "chat-serve.config.ts": `export default {
  store: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  background: { concurrency: 2 },
  graphs: { slow: { graph: "./slow.ts:graph", description: "takes a minute" } },
};`,
    "slow.ts": `
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { setTimeout as sleep } from "node:timers/promises";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", async (_state, config) => { await sleep(60_000, undefined, { signal: config.signal }); return { messages: [new AIMessage("done")] }; })
  .addEdge(START, "respond").addEdge("respond", END).compile();
`,
  });
  cleanups.push(project.cleanup);
  const first = await startCli([], { cwd: project.dir });
  cleanups.push(() => first.stop("SIGKILL"));
  const client = new OpenAI({ baseURL: first.baseURL, apiKey: "x", maxRetries: 0 });
  const created = await client.responses.create({ model: "slow", input: "go", background: true });
  while ((await client.responses.retrieve(created.id)).status !== "in_progress") await new Promise((resolve) => setTimeout(resolve, 20));
  // The operator's view, without the server's keys: the run going on.
  const running = await runCli(["responses", "list", "--status", "in_progress", "--json"], { cwd: project.dir });
  assert.equal(running.code, 0, running.stderr);
  assert.deepEqual(
    (JSON.parse(running.stdout) as { id: string; model: string; background: boolean; scope: string }[]).map(
      ({ id, model, background, scope }) => [id, model, background, scope],
    ),
    [[created.id, "slow", true, "default"]],
  );
  await first.stop("SIGKILL");

  const second = await startCli([], { cwd: project.dir });
  cleanups.push(() => second.stop("SIGKILL"));
  assert.match(second.output(), /1 background response left unfinished by the last run of the server now reads? failed/u);
  const after = await new OpenAI({ baseURL: second.baseURL, apiKey: "x", maxRetries: 0 }).responses.retrieve(created.id);
  assert.equal(after.status, "failed");
  assert.match(after.error?.message ?? "", /^The server restarted while this background response was queued or running/u);
  const table = await runCli(["responses", "list", "--status", "failed"], { cwd: project.dir });
  assert.match(table.stdout, new RegExp(`│ ${created.id} │ slow\\s+│ default\\s+│ failed\\s+│ yes`, "u"));
  assert.equal(await second.stop(), 0);
});
