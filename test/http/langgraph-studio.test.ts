import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Auth, HTTPException, isStudioUser } from "@langchain/langgraph-sdk/auth";
import { graph as memory } from "../../demo/graphs/memory.js";
import { LangGraphAuth } from "../../src/http/langgraph-auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The calls LangGraph Studio makes to a self-hosted server: `/info`, JSON bodies sent as
// text/plain, assistants searched by `metadata.created_by`, a run streamed in `debug` mode (its
// checkpoints named), "re-run from here" (`__copy__` of a checkpoint, then a run from the copy),
// and its way in past a project's Auth (`x-auth-scheme: langsmith` with a deployment key).

const STUDIO_KEY = "studio-deployment-key-0123456789";

/** An Auth whose users are their tokens; Studio's user sees everything, others what they own. */
function projectAuth() {
  return new Auth()
    .authenticate((request: Request) => {
      const token = request.headers.get("authorization")?.split(" ").at(-1);
      if (token !== "token-carol") throw new HTTPException(401, { message: "Invalid token" });
      return "carol";
    })
    .on("*", ({ user }) => (isStudioUser(user) ? undefined : { owner: user.identity }));
}

/** Sends what Studio sends: a JSON body as text/plain, with Studio's headers. */
function studio(origin: string, path: string, body?: unknown, key = STUDIO_KEY) {
  return fetch(`${origin}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "text/plain;charset=UTF-8", "x-auth-scheme": "langsmith", "x-api-key": key },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** The events of an SSE answer, `[event, data]` in order. */
async function sse(response: Response): Promise<[string, unknown][]> {
  const events: [string, unknown][] = [];
  for (const block of (await response.text()).split("\n\n")) {
    const event = /^event: (.+)$/mu.exec(block)?.[1];
    const data = /^data: (.+)$/mu.exec(block)?.[1];
    if (event !== undefined && data !== undefined) events.push([event, JSON.parse(data)]);
  }
  return events;
}

describe("LangGraph Studio against chat-serve", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(
      { memory: { graph: memory, description: "Remembers", threads: true } },
      { langgraph: true, auth: { keys: [{ key: STUDIO_KEY, tenant: "operator" }], customAuth: new LangGraphAuth(projectAuth()) } },
    );
  });
  after(() => server.close());

  test("`/info` answers without a user; JSON sent as text/plain is read as JSON", async () => {
    const info = await fetch(`${server.origin}/info`);
    assert.equal(info.status, 200);
    assert.deepEqual(((await info.json()) as { flags: unknown }).flags, { assistants: true, crons: true, langsmith: false });
    const found = await studio(server.origin, "/assistants/search", { metadata: { created_by: "system" }, limit: 10 });
    assert.equal(found.status, 200);
    assert.deepEqual(
      ((await found.json()) as { graph_id: string }[]).map((assistant) => assistant.graph_id),
      ["memory"],
    );
  });

  test("a run in debug mode names its checkpoints; re-run from here copies one and goes on from the copy", async () => {
    const thread = (await (await studio(server.origin, "/threads", {})).json()) as { thread_id: string };
    const streamed = await sse(
      await studio(server.origin, `/threads/${thread.thread_id}/runs/stream`, {
        assistant_id: "memory",
        input: { messages: [{ role: "user", content: "first" }] },
        stream_mode: ["debug"],
      }),
    );
    const checkpoints = streamed
      .filter(([event, data]) => event === "debug" && (data as { type: string }).type === "checkpoint")
      .map(([, data]) => (data as { payload: Record<string, unknown> }).payload);
    assert.ok(checkpoints.length >= 2, `a checkpoint event per step: ${JSON.stringify(streamed).slice(0, 400)}`);
    for (const payload of checkpoints) {
      assert.equal(typeof (payload.checkpoint as { checkpoint_id?: unknown }).checkpoint_id, "string");
      assert.ok("parent_checkpoint" in payload && !("parentConfig" in payload), Object.keys(payload).join());
      const configurable = (payload.config as { configurable: Record<string, unknown> }).configurable;
      assert.deepEqual(
        Object.keys(configurable).filter((key) => key.startsWith("__")),
        [],
        "no engine keys in the config",
      );
    }
    // The step before the model answered: re-run from there.
    const before = checkpoints.find((payload) => (payload.next as string[]).includes("respond"));
    assert.ok(before !== undefined);
    const checkpointId = (before.checkpoint as { checkpoint_id: string }).checkpoint_id;
    const copied = await studio(server.origin, `/threads/${thread.thread_id}/state`, {
      values: null,
      as_node: "__copy__",
      checkpoint_id: checkpointId,
    });
    assert.equal(copied.status, 200);
    const copy = ((await copied.json()) as { checkpoint: { checkpoint_id: string } }).checkpoint.checkpoint_id;
    assert.notEqual(copy, checkpointId, "the copy is a checkpoint of its own");
    const rerun = await studio(server.origin, `/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: "memory",
      input: null,
      checkpoint_id: copy,
    });
    assert.equal(rerun.status, 200);
    const values = (await rerun.json()) as { messages: { content: string; type: string }[] };
    assert.deepEqual(
      values.messages.map((message) => message.type),
      ["human", "ai"],
      "one answer to the first message: the branch from the copy, not a second turn",
    );
  });

  test("Studio's requests come in with a deployment key only; disable_studio_auth sends them through authenticate", async () => {
    const wrongKey = await studio(server.origin, "/threads/search", {}, "not-a-deployment-key");
    assert.equal(wrongKey.status, 401);
    const closed = await startTestServer(
      { memory: { graph: memory, description: "Remembers", threads: true } },
      {
        langgraph: true,
        auth: {
          keys: [{ key: STUDIO_KEY, tenant: "operator" }],
          customAuth: new LangGraphAuth(projectAuth(), { disableStudioAuth: true }),
        },
      },
    );
    try {
      assert.equal((await studio(closed.origin, "/threads/search", {})).status, 401);
      const carol = await fetch(`${closed.origin}/threads/search`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer token-carol" },
        body: "{}",
      });
      assert.equal(carol.status, 200);
    } finally {
      await closed.close();
    }
  });
});
