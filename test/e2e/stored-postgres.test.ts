import assert from "node:assert/strict";
import { describe, test } from "node:test";
import OpenAI from "openai";
import pg from "pg";
import { type RunningServer, runCli, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import {
  cleanupsAfterAll,
  dropSchema,
  POSTGRES_URL,
  REDIS_URL,
  requireRedisAndPostgres,
  uniquePrefix,
  uniqueSchema,
} from "../helpers/services.js";
import { tempProject } from "../helpers/temp-project.js";

// Two chat-serve processes on one Postgres store and checkpointer (and one Redis
// coordinator): whatever one stores, the other reads, continues and deletes, and a thread
// continued on both in turn stays one conversation. Then the operator's purge.

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();

const RECALL_MODULE = `
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
const said = (messages) => messages.filter((m) => m.getType() === "human").map((m) => m.text).join(" | ");
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state) => ({ messages: [new AIMessage("I remember: " + said(state.messages))] }))
  .addEdge(START, "respond").addEdge("respond", END).compile();
`;

async function twoServers() {
  const schema = uniqueSchema();
  const project = tempProject({
    "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())} },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)} },
  graphs: {
    stateful: { graph: "./recall.ts:graph", description: "remembers on a thread", threads: true },
    stateless: { graph: "./recall.ts:graph", description: "remembers what it is given" },
  },
};`,
    "recall.ts": RECALL_MODULE,
  });
  cleanups.push(project.cleanup, () => dropSchema(schema));
  const servers: RunningServer[] = [];
  for (let index = 0; index < 2; index += 1) {
    const server = await startCli([], { cwd: project.dir });
    servers.push(server);
    cleanups.push(() => void server.stop("SIGKILL"));
  }
  const clients = servers.map((server) => new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 }));
  return { clients: clients as [OpenAI, OpenAI], dir: project.dir, schema, servers };
}

describe("two processes on one Postgres store", { skip, timeout: 120_000 }, () => {
  test("made on one, retrieved, continued and deleted on the other; a thread continued on both stays one", async () => {
    const { clients, servers, dir, schema } = await twoServers();
    const [one, two] = clients;
    // The banner follows the ready line.
    await eventually(async () => {
      assert.match(servers[0]!.output(), /stored\s+responses and conversations in Postgres, kept 30d after their last use/u);
    }, 5_000);

    // Background runs go on the queue both share: queued on one, read on the other.
    const queued = await one.responses.create({ model: "stateless", input: "a", background: true });
    await eventually(async () => {
      assert.equal((await two.responses.retrieve(queued.id)).output_text, "I remember: a", "not done yet");
    }, 10_000);
    const first = await one.responses.create({ model: "stateless", input: "a" });
    assert.equal((await two.responses.retrieve(first.id)).output_text, "I remember: a");
    const continued = await two.responses.create({ model: "stateless", previous_response_id: first.id, input: "b" });
    assert.equal(continued.output_text, "I remember: a | b");

    let previous = await one.responses.create({ model: "stateful", input: "1" });
    for (const [index, input] of ["2", "3", "4"].entries()) {
      previous = await clients[(index + 1) % 2]!.responses.create({ model: "stateful", previous_response_id: previous.id, input });
    }
    assert.equal(previous.output_text, "I remember: 1 | 2 | 3 | 4");

    const conversation = await one.conversations.create({ items: [{ role: "user", content: "seeded" }] });
    await two.responses.create({ model: "stateful", conversation: conversation.id, input: "x" });
    const last = await one.responses.create({ model: "stateful", conversation: conversation.id, input: "y" });
    assert.equal(last.output_text, "I remember: seeded | x | y");
    assert.equal((await two.conversations.items.list(conversation.id)).data.length, 5);

    const session = "shared-session";
    let history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [];
    for (const [index, content] of ["p", "q", "r"].entries()) {
      history.push({ role: "user", content });
      const completion = await clients[index % 2]!.chat.completions.create({
        model: "stateful",
        messages: history,
        metadata: { session_id: session },
      });
      history = [...history, { role: "assistant", content: completion.choices[0]!.message.content ?? "" }];
    }
    assert.equal(history.at(-1)!.content, "I remember: p | q | r");

    await two.responses.delete(first.id);
    await assert.rejects(one.responses.retrieve(first.id), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404);

    // The operator's purge, without the server: a dry run counts, a purge deletes, threads included.
    const dry = await runCli(["responses", "purge", "--older-than", "0s", "--dry-run", "--json"], { cwd: dir });
    assert.equal(dry.code, 0, dry.stderr);
    const counted = JSON.parse(dry.stdout) as { responses: number; conversations: number; sessions: number };
    assert.ok(counted.responses >= 5 && counted.conversations === 1 && counted.sessions === 1, dry.stdout);
    assert.ok(await one.responses.retrieve(previous.id), "a dry run deletes nothing");
    const purge = await runCli(["responses", "purge", "--older-than", "0s"], { cwd: dir });
    assert.equal(purge.code, 0, purge.stderr);
    assert.match(
      purge.stdout,
      /^deleted \d+ stored responses, 1 conversations and 1 chat sessions unused for more than 0s \(and \d+ threads' checkpoints\)/u,
    );
    await assert.rejects(two.responses.retrieve(previous.id), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT count(*)::int AS count FROM "${schema}".checkpoints`);
      assert.equal(rows[0].count, 0, "every thread's checkpoints were deleted with what referred to them");
    } finally {
      await client.end();
    }
  });
});
