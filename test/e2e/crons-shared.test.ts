import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@langchain/langgraph-sdk";
import { type RunningServer, startCli } from "../helpers/cli.js";
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
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

// Crons on the shared queue (BullMQ job schedulers in Redis): two processes, each firing made
// once; paused from the other process; and a cron that outlives every process fires again
// from a third once it is up.

const skip = await requireRedisAndPostgres();
const cleanups = cleanupsAfterAll();

describe("crons on Postgres + Redis", { skip, timeout: 120_000 }, () => {
  test("two processes fire each firing once; paused from the other; a restart keeps the schedule; deleted, it stops", async () => {
    const schema = uniqueSchema();
    const project = tempProject({
      "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())} },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)} },
  graphs: { echo: { graph: "./echo.ts:graph", description: "echo" } },
};`,
      "echo.ts": ECHO_GRAPH_MODULE,
    });
    cleanups.push(project.cleanup, () => dropSchema(schema));
    const start = async () => {
      const server = await startCli([], { cwd: project.dir });
      cleanups.push(() => void server.stop("SIGKILL"));
      return server;
    };
    const clientOf = (server: RunningServer) => new Client({ apiUrl: new URL(server.baseURL).origin });
    const [one, two] = [await start(), await start()];
    const [a, b] = [clientOf(one), clientOf(two)];

    const cron = await a.crons.create("echo", {
      schedule: "*/2 * * * * *",
      input: { messages: [{ role: "user", content: "tick" }] },
      onRunCompleted: "keep",
    });
    /** The threads the cron's runs made (each run's metadata, cron_id among it, starts its thread's). */
    const made = async (via: Client) => (await via.threads.search({ metadata: { cron_id: cron.cron_id }, limit: 1000 })).length;
    const from = Date.now();
    await sleep(7_000);
    const fired = await made(b);
    const window = (Date.now() - from) / 1000;
    // One run per firing, whichever process took it: never two.
    assert.ok(fired >= 2 && fired <= Math.floor(window / 2) + 1, `${fired} runs in ${window.toFixed(1)} s of a cron firing every 2 s`);

    assert.equal((await b.crons.update(cron.cron_id, { enabled: false })).enabled, false);
    await sleep(500);
    const paused = await made(a);
    await sleep(3_000);
    assert.equal(await made(a), paused, "paused: no run");

    await b.crons.update(cron.cron_id, { enabled: true });
    await Promise.all([one.stop("SIGKILL"), two.stop("SIGKILL")]);
    const third = clientOf(await start());
    await eventually(async () => assert.ok((await made(third)) > paused), 20_000);
    await third.crons.delete(cron.cron_id);
    await sleep(500);
    const deleted = await made(third);
    await sleep(3_000);
    assert.equal(await made(third), deleted, "deleted: no run");
  });
});
