import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { type RunningServer, startCli } from "../helpers/cli.js";
import { distributedProject } from "../helpers/distributed-project.js";
import { answerBatch } from "../helpers/resume.js";
import { dropSchema, POSTGRES_URL, REDIS_URL, requirePostgres, requireRedis, uniquePrefix, uniqueSchema } from "../helpers/services.js";

const redisStatus = await requireRedis();
const postgresStatus = await requirePostgres();
const skip = redisStatus.skip || postgresStatus.skip;

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function twoServers(coordinator: string, firstServerEnv: Record<string, string> = {}) {
  const schema = uniqueSchema();
  const counterKey = `${uniquePrefix()}counter`;
  const project = distributedProject({ coordinator, schema, postgresUrl: POSTGRES_URL });
  cleanups.push(project.cleanup, () => dropSchema(schema));
  const processEnv = { COUNTER_REDIS_URL: REDIS_URL, COUNTER_KEY: counterKey };
  const servers: RunningServer[] = [];
  for (let index = 0; index < 2; index += 1) {
    const server = await startCli([], { cwd: project.dir, env: index === 0 ? { ...processEnv, ...firstServerEnv } : processEnv });
    servers.push(server);
    cleanups.push(() => void server.stop("SIGKILL"));
  }
  const redis = new Redis(REDIS_URL);
  cleanups.push(() => redis.disconnect());
  const clients = servers.map((server) => new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 }));
  return {
    servers,
    clients,
    count: async () => Number((await redis.get(counterKey)) ?? 0),
    holding: async () => (await redis.get(`${counterKey}:holding`)) === "1",
    schema,
    dir: project.dir,
  };
}

function resumeMessages(history: Message[], calls: ToolCall[]): Message[] {
  return answerBatch(history, calls, '{"resume": "yes"}');
}

const coordinators = {
  redis: () => `{ kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())}, leaseTtlMs: 1500 }`,
  postgres: () => `{ kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, maxConcurrentLeases: 30 }`,
};

for (const [name, coordinator] of Object.entries(coordinators)) {
  describe(`two chat-serve processes sharing the ${name} coordinator and the Postgres checkpointer`, { skip, timeout: 120_000 }, () => {
    test("a run paused on one resumes on the other; 20 concurrent resumes across both run the node once", async () => {
      const { clients, count } = await twoServers(coordinator());
      const history: Message[] = [{ role: "user", content: "go" }];
      const paused = await clients[0]!.chat.completions.create({ model: "counter", messages: history });
      const calls = paused.choices[0]!.message.tool_calls as ToolCall[];
      assert.equal(calls[0]?.function.name, "graph_interrupt");

      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) =>
          clients[index % 2]!.chat.completions.create({ model: "counter", messages: resumeMessages(history, calls) }),
        ),
      );
      const succeeded = results.filter((result) => result.status === "fulfilled");
      assert.equal(
        succeeded.length,
        1,
        JSON.stringify(results.map((result) => (result.status === "rejected" ? String(result.reason) : "ok"))),
      );
      for (const result of results) {
        if (result.status === "rejected") {
          const error = result.reason as InstanceType<typeof OpenAI.APIError>;
          assert.equal(error.status, 409, String(error));
          assert.ok(["run_busy", "interrupt_state_conflict"].includes(String(error.code)));
        }
      }
      assert.equal(await count(), 1, "the node after the interrupt ran exactly once");

      // A second run: paused on the second process, finished on the first.
      const second = await clients[1]!.chat.completions.create({ model: "counter", messages: history });
      const done = await clients[0]!.chat.completions.create({
        model: "counter",
        messages: resumeMessages(history, second.choices[0]!.message.tool_calls as ToolCall[]),
      });
      assert.equal(done.choices[0]?.message.content, "done");
      assert.equal(await count(), 2);
    });

    test("kill -9 of the process holding a lease: the run is resumed elsewhere, its checkpoint intact", async () => {
      const { servers, clients, count, holding } = await twoServers(coordinator(), { HOLD_AFTER_ANSWER_MS: "30000" });
      const history: Message[] = [{ role: "user", content: "go" }];
      const runId = randomUUID();
      const paused = await clients[0]!.chat.completions.create({ model: "counter", messages: history, metadata: { graph_run_id: runId } });
      const calls = paused.choices[0]!.message.tool_calls as ToolCall[];
      // Server 0 takes the resume and holds the lease while its node sleeps.
      void clients[0]!.chat.completions.create({ model: "counter", messages: resumeMessages(history, calls) }).catch(() => undefined);
      // The graph marks in Redis when server 0 is holding the resumed run (and its lease).
      const holdDeadline = Date.now() + 15_000;
      while (!(await holding())) {
        if (Date.now() > holdDeadline) throw new Error("server 0 never started the resumed run");
        await sleep(50);
      }
      await assert.rejects(
        clients[1]!.chat.completions.create({ model: "counter", messages: resumeMessages(history, calls) }),
        (error: InstanceType<typeof OpenAI.APIError>) => error.code === "run_busy",
      );
      await servers[0]!.stop("SIGKILL");
      // Redis frees the key after its TTL; Postgres frees the lock when the connection dies.
      const deadline = Date.now() + 10_000;
      let replayed: OpenAI.Chat.Completions.ChatCompletion | undefined;
      while (replayed === undefined) {
        try {
          replayed = await clients[1]!.chat.completions.create({ model: "counter", messages: history, metadata: { graph_run_id: runId } });
        } catch (error) {
          if ((error as { code?: string }).code !== "run_busy" || Date.now() > deadline) throw error;
          await sleep(200);
        }
      }
      // The checkpoint is intact: the same batch is still pending, and answering it finishes the run.
      assert.deepEqual(replayed.choices[0]?.message.tool_calls, calls);
      assert.equal(await count(), 0);
      const done = await clients[1]!.chat.completions.create({ model: "counter", messages: resumeMessages(history, calls) });
      assert.equal(done.choices[0]?.message.content, "done");
      assert.equal(await count(), 1);
    });
  });
}
