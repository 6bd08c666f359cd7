import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import OpenAI from "openai";
import pg from "pg";
import { WebSocket } from "ws";
import { REPO_ROOT, type RunningServer, runCli, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import {
  dropSchema,
  POSTGRES_URL,
  REDIS_URL,
  requirePostgres,
  requireRedisAndPostgres,
  uniquePrefix,
  uniqueSchema,
} from "../helpers/services.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

const pgClient = pg.Client;

// A LangGraph.js project whose langgraph.json names an `Auth` (LangGraph's custom-auth guide:
// a token per user, an owner on everything, a store namespace per user), served as is and
// driven by the LangGraph SDK's Client with two users' tokens.
const FIXTURE = fileURLToPath(new URL("../fixtures/agent-server-project/", import.meta.url));
const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

describe("a LangGraph project's Auth, as LangGraph's server runs it", { timeout: 120_000 }, () => {
  let server: RunningServer;
  let origin: string;
  const as = (token: string | undefined) =>
    new Client({ apiUrl: origin, defaultHeaders: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  const post = (route: string, token: string | undefined, body: unknown) =>
    fetch(`${origin}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });

  before(async () => {
    server = await startCli([], { cwd: FIXTURE });
    origin = new URL(server.baseURL).origin;
  });
  after(async () => {
    await server?.stop();
  });

  test("the start says where its auth comes from", () => {
    assert.match(
      server.output(),
      /langgraph read 1 graph, auth from \.\/src\/auth\.ts:auth, a thread TTL \(each thread's own, swept every 0\.02 minutes\), a semantic store \(\.\/src\/embed\.ts:embed, 3 dimensions\), routes from \.\/src\/app\.ts:app from langgraph\.json/u,
    );
  });

  test("no token, a wrong one, or an authenticate that breaks: refused in the protocol's shape, no internals", async () => {
    const none = await post("/threads", undefined, {});
    assert.equal(none.status, 401);
    assert.deepEqual(await none.json(), { detail: "Invalid token" });
    const wrong = await post("/threads/search", "token-mallory", {});
    assert.equal(wrong.status, 401);
    const broken = await post("/threads", "token-broken", {});
    assert.equal(broken.status, 500);
    const text = await broken.text();
    assert.doesNotMatch(text, /hunter2|10\.1\.2\.3|database/u, "the project's error text stays in the log");
    assert.match(JSON.parse(text).detail, /could not check who is calling/u);
    // Every surface asks the same Auth: an OpenAI client without a token is refused too.
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: "not-a-token" });
    await assert.rejects(openai.models.list(), (error: { status?: number }) => error.status === 401);
  });

  test("each user sees only their own threads and runs; another's is not found", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const thread = await alice.threads.create({ metadata: { topic: "plans" } });
    assert.deepEqual(thread.metadata, { topic: "plans", owner: "alice" }, "the handler made alice its owner");
    const waited = (await alice.runs.wait(thread.thread_id, "agent", { input: input("hello") })) as {
      messages: { content: string }[];
    };
    assert.equal(waited.messages.at(-1)?.content, "alice said: hello", "the graph got the user in its config");

    await assert.rejects(bob.threads.get(thread.thread_id), /404/u);
    await assert.rejects(bob.threads.getState(thread.thread_id), /404/u);
    await assert.rejects(bob.threads.update(thread.thread_id, { metadata: { owner: "bob" } }), /404/u);
    await assert.rejects(bob.runs.wait(thread.thread_id, "agent", { input: input("mine now") }), /404/u);
    await assert.rejects(bob.runs.list(thread.thread_id), /404/u);
    const [run] = await alice.runs.list(thread.thread_id);
    assert.ok(run !== undefined);
    await assert.rejects(bob.runs.get(thread.thread_id, run.run_id), /404/u);
    await assert.rejects(bob.threads.delete(thread.thread_id), /404/u);

    const bobs = await bob.threads.create();
    const seenByBob = (await bob.threads.search()).map((found) => found.thread_id);
    assert.ok(seenByBob.includes(bobs.thread_id));
    assert.ok(!seenByBob.includes(thread.thread_id), "alice's thread is not in bob's search");
    const seenByAlice = (await alice.threads.search({ limit: 100 })).map((found) => found.thread_id);
    assert.ok(seenByAlice.includes(thread.thread_id) && !seenByAlice.includes(bobs.thread_id));
    assert.equal(await bob.threads.count(), seenByBob.length);
    // Taking another user's thread id is refused as LangGraph's server refuses it.
    const taken = await post("/threads", "token-bob", { thread_id: thread.thread_id, if_exists: "do_nothing" });
    assert.equal(taken.status, 409);
    // A thread a run makes is its user's too.
    const made = await bob.runs.create(null, "agent", { input: input("stateless") });
    assert.ok(made.run_id);
    assert.equal((await alice.threads.get(thread.thread_id)).metadata?.owner, "alice");
  });

  test("the store: a user's namespace is theirs; a handler that refuses is a 403", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    await alice.store.putItem(["alice", "prefs"], "color", { value: "green" });
    assert.deepEqual((await alice.store.getItem(["alice", "prefs"], "color"))?.value, { value: "green" });
    await assert.rejects(bob.store.getItem(["alice", "prefs"], "color"), /403/u);
    await assert.rejects(bob.store.putItem(["alice", "prefs"], "color", { value: "red" }), /403/u);
    await assert.rejects(bob.store.searchItems(["alice"]), /403/u);
    const found = await alice.store.searchItems(["alice"]);
    assert.deepEqual(
      found.items.map((item) => item.key),
      ["color"],
    );
  });

  test("store.index: a search with a query ranks the user's items by meaning, with scores", async () => {
    const alice = as("token-alice");
    await alice.store.putItem(["alice", "notes"], "pets", { text: "my cat likes to purr on the sofa" });
    await alice.store.putItem(["alice", "notes"], "forecast", { text: "rain and a storm tomorrow" });
    await alice.store.putItem(["alice", "notes"], "work", { text: "a typescript bug that will not compile" });
    const found = await alice.store.searchItems(["alice", "notes"], { query: "a kitten", limit: 3 });
    assert.equal(found.items.length, 3);
    assert.equal(found.items[0]?.key, "pets", "the item about cats first");
    const scores = found.items.map((item) => (item as { score?: number }).score);
    assert.ok(
      scores.every((score) => typeof score === "number"),
      "each item has its similarity",
    );
    assert.ok(scores[0]! > scores[1]!, "ranked by it");
    const weather = await alice.store.searchItems(["alice", "notes"], { query: "is it sunny", limit: 1 });
    assert.equal(weather.items[0]?.key, "forecast");
  });

  test("http.app: the project's Hono routes are served beside the protocol, outside its auth unless asked", async () => {
    const hello = await fetch(`${origin}/hello`);
    assert.equal(hello.status, 200, "enable_custom_route_auth is off: no token needed, as on LangGraph's server");
    assert.deepEqual(await hello.json(), { hello: "world", authorization: null });
    const echoed = await fetch(`${origin}/echo`, { method: "POST", headers: { "content-type": "application/xml" }, body: "<a>1</a>" });
    assert.equal(echoed.status, 201);
    assert.equal(echoed.headers.get("x-project"), "agent-server-project");
    assert.equal(await echoed.text(), "<a>1</a>", "the body reaches it as sent, whatever its type");
    // What neither answers is chat-serve's own not found; the protocol's routes stay behind the auth.
    const unknown = await fetch(`${origin}/nowhere`);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, "unknown_url");
    assert.equal((await post("/threads/search", undefined, {})).status, 401);
  });

  test("crons and assistants are their owner's: another user neither finds nor changes them", async () => {
    const [alice, bob] = [as("token-alice"), as("token-bob")];
    const cron = await alice.crons.create("agent", { schedule: "0 0 1 1 *", input: input("new year") });
    assert.equal(cron.metadata?.owner, "alice");
    assert.equal(await alice.crons.count(), 1);
    assert.equal(await bob.crons.count(), 0);
    await assert.rejects(bob.crons.update(cron.cron_id, { enabled: false }), /404/u);
    await assert.rejects(bob.crons.delete(cron.cron_id), /404/u);
    await alice.crons.delete(cron.cron_id);
    const assistant = await alice.assistants.create({ graphId: "agent", name: "Alice's" });
    assert.equal(assistant.metadata?.owner, "alice");
    await assert.rejects(bob.assistants.get(assistant.assistant_id), /404/u);
    await assert.rejects(bob.assistants.update(assistant.assistant_id, { name: "Bob's now" }), /404/u);
    assert.equal((await alice.assistants.get(assistant.assistant_id)).name, "Alice's");
  });

  test("another user's assistant is not found to a run, a wait, a protocol run.start or a cron; the graph's own is everyone's", async () => {
    const [alice, bob] = [as("token-alice"), as("token-bob")];
    const assistant = await alice.assistants.create({ graphId: "agent", name: "Alice's secret", context: { plan: "hers" } });
    const refused = await post("/runs/wait", "token-bob", { assistant_id: assistant.assistant_id, input: input("use hers") });
    assert.equal(refused.status, 404);
    await assert.rejects(bob.runs.create(null, assistant.assistant_id, { input: input("hers") }), /404/u);
    await assert.rejects(bob.crons.create(assistant.assistant_id, { schedule: "0 0 1 1 *", input: input("hers") }), /404/u);
    const command = await post(`/threads/${randomUUID()}/commands`, "token-bob", {
      id: 1,
      method: "run.start",
      params: { assistant_id: assistant.assistant_id, input: input("hers") },
    });
    assert.match(JSON.stringify(await command.json()), /not found|no assistant/iu);
    // Alice runs her own; bob runs the graph's system assistant.
    const hers = (await alice.runs.wait(null, assistant.assistant_id, { input: input("mine") })) as { messages: { content: string }[] };
    assert.equal(hers.messages.at(-1)?.content, "alice said: mine");
    const his = (await bob.runs.wait(null, "agent", { input: input("the graph") })) as { messages: { content: string }[] };
    assert.equal(his.messages.at(-1)?.content, "bob said: the graph");
  });

  test("the store: a listing without a prefix shows each user only the namespaces the handler lets them see", async () => {
    const [alice, bob] = [as("token-alice"), as("token-bob")];
    await alice.store.putItem(["alice", "diary"], "monday", { text: "private" });
    await bob.store.putItem(["bob", "notes"], "todo", { text: "mine" });
    const bobs = await bob.store.listNamespaces();
    assert.ok(bobs.namespaces.length > 0, "bob sees his own");
    assert.ok(
      bobs.namespaces.every((namespace) => namespace[0] === "bob"),
      `bob sees only his own: ${JSON.stringify(bobs.namespaces)}`,
    );
    const alices = await alice.store.listNamespaces();
    assert.ok(alices.namespaces.some((namespace) => namespace.join("/") === "alice/diary"));
    assert.ok(alices.namespaces.every((namespace) => namespace[0] === "alice"));
  });

  test("A2A: a task's run carries the Auth user, as every other surface's", async () => {
    const answer = await fetch(`${origin}/v1/a2a/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", authorization: "Bearer token-alice" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "over a2a" }] } },
      }),
    });
    const text = await answer.text();
    assert.match(text, /alice said: over a2a/u, text.slice(0, 400));
  });

  test("checkpointer.ttl: a thread idle past its own ttl is swept; one without stays", async () => {
    const alice = as("token-alice");
    const shortLived = await alice.threads.create({ ttl: { ttl: 0.05, strategy: "delete" } });
    const kept = await alice.threads.create();
    await alice.runs.wait(shortLived.thread_id, "agent", { input: input("soon gone") });
    const deadline = Date.now() + 20_000;
    let gone = false;
    while (!gone && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      gone = await alice.threads.get(shortLived.thread_id).then(
        () => false,
        (error: Error) => /404/u.test(error.message),
      );
    }
    assert.ok(gone, "swept within 20 s of a 3 s ttl");
    assert.equal((await alice.threads.get(kept.thread_id)).thread_id, kept.thread_id);
  });

  test("checkpointer.ttl with keep_latest: the thread stays with its state, its history cut to one checkpoint", async () => {
    const alice = as("token-alice");
    // The SDK types a thread's own strategy as "delete" only; LangGraph's API takes keep_latest too.
    const ttl = { ttl: 0.05, strategy: "keep_latest" } as unknown as { ttl: number; strategy: "delete" };
    const pruned = await alice.threads.create({ ttl });
    await alice.runs.wait(pruned.thread_id, "agent", { input: input("remember me") });
    const values = (await alice.threads.getState(pruned.thread_id)).values;
    assert.ok((await alice.threads.getHistory(pruned.thread_id)).length > 1);
    await eventually(async () => assert.equal((await alice.threads.getHistory(pruned.thread_id)).length, 1), 20_000);
    assert.deepEqual((await alice.threads.getState(pruned.thread_id)).values, values);
  });

  test("protocol v2: a follower of a thread another user then makes sees none of it, over SSE or a WebSocket", async () => {
    const sse = randomUUID();
    const socketThread = randomUUID();
    // Bob follows two thread ids nobody has made yet: one with server-sent events, one on a socket.
    const following = await post(`/threads/${sse}/stream/events`, "token-bob", { channels: ["values", "messages", "lifecycle"] });
    assert.equal(following.status, 200);
    const bobRead = following.text();
    const socket = new WebSocket(`${origin.replace("http", "ws")}/threads/${socketThread}/stream/events`, {
      headers: { authorization: "Bearer token-bob" },
    });
    const received: string[] = [];
    socket.on("message", (data) => received.push(String(data)));
    const closed = once(socket, "close");
    await once(socket, "open");
    socket.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["values", "messages"] } }));
    await eventually(async () => assert.equal(received.length, 1, "the subscription is answered"), 5_000);

    // Alice starts a run on each: the threads are hers.
    for (const threadId of [sse, socketThread]) {
      const started = await post(`/threads/${threadId}/commands`, "token-alice", {
        id: 1,
        method: "run.start",
        params: { assistant_id: "agent", input: input("my secret plan") },
      });
      assert.equal(((await started.json()) as { type: string }).type, "success");
    }
    await eventually(
      async () => assert.equal(((await as("token-alice").threads.getState(sse)).values as { messages?: unknown[] }).messages?.length, 2),
      10_000,
    );

    // Bob's stream ended with nothing of hers; his socket closed as for a thread not found.
    const text = await bobRead;
    assert.doesNotMatch(text, /secret plan|alice/u);
    const [code] = (await closed) as [number];
    assert.equal(code, 1008);
    assert.ok(
      received.slice(1).every((message) => !/secret plan|alice/u.test(message)),
      "no event of alice's reached bob's socket",
    );
    // A command of his on her thread is refused as over HTTP.
    const asked = await post(`/threads/${socketThread}/commands`, "token-bob", { id: 2, method: "state.get", params: {} });
    assert.equal(asked.status, 404);
    // Alice follows her own thread and reads its events from the start.
    const hers = await post(`/threads/${sse}/stream/events`, "token-alice", { channels: ["values"], since: 0 });
    const reader = hers.body!.getReader();
    const { value } = await reader.read();
    assert.match(new TextDecoder().decode(value), /event: values/u);
    await reader.cancel();
  });

  test("a handler that returns a filter of the wrong shape refuses the request, never answers unfiltered", async () => {
    const refused = await post("/assistants/search", "token-bob", {});
    assert.equal(refused.status, 500);
    assert.match(((await refused.json()) as { detail: string }).detail, /could not check what this caller may see/u);
    // The log line is written as the answer goes: it may reach the output a moment later.
    await eventually(
      async () =>
        assert.match(
          server.output(),
          /auth handler for assistants:search returned an object with an operator other than \$eq or \$contains/u,
        ),
      5_000,
    );
  });
});

describe("a LangGraph project whose Auth does not load", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "chat-serve-auth-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("`init --from langgraph.json` writes the Auth, the routes, the store and the TTL into the chat-serve config", async () => {
    cpSync(FIXTURE, dir, { recursive: true });
    const init = await runCli(["init", "--from", "langgraph.json"], { cwd: dir });
    assert.equal(init.code, 0, init.stderr);
    const written = readFileSync(path.join(dir, "chat-serve.config.ts"), "utf8");
    assert.match(written, /\n {2}auth: \{ custom: "\.\/src\/auth\.ts:auth" \},\n/u);
    // The rest of what langgraph.json says, in the config's names.
    assert.match(written, /\n {2}server: \{ host: "127\.0\.0\.1", port: 8000, prefix: "\/v1", cors: \{ origins: \["\*"\] \} \},\n/u);
    assert.match(written, /\n {2}http: \{ app: "\.\/src\/app\.ts:app", enableCustomRouteAuth: false \},\n/u);
    assert.match(written, /\n {2}graphStore: \{ index: \{ embed: "\.\/src\/embed\.ts:embed", dims: 3, fields: \["text"\] \} \},\n/u);
    assert.match(written, /\n {2}checkpointer: \{ kind: "memory", ttl: \{ strategy: "delete", sweepIntervalMinutes: 0\.02 \} \},\n/u);
    rmSync(path.join(dir, "chat-serve.config.ts"));
  });

  test("`init --from` in a yarn project that has chat-serve already keeps its specifier and says yarn's commands", async () => {
    const yarnProject = mkdtempSync(path.join(tmpdir(), "chat-serve-yarn-"));
    try {
      cpSync(FIXTURE, yarnProject, { recursive: true });
      const manifest = { name: "agent", private: true, dependencies: { "chat-serve": "file:./vendor/chat-serve-0.1.0.tgz" } };
      writeFileSync(path.join(yarnProject, "package.json"), JSON.stringify(manifest));
      writeFileSync(path.join(yarnProject, "yarn.lock"), "# yarn lockfile v1\n");
      const init = await runCli(["init", "--from", "langgraph.json"], { cwd: yarnProject });
      assert.equal(init.code, 0, init.stderr);
      const written = JSON.parse(readFileSync(path.join(yarnProject, "package.json"), "utf8"));
      assert.equal(written.dependencies["chat-serve"], "file:./vendor/chat-serve-0.1.0.tgz", "the project's own specifier stays");
      assert.equal(written.scripts.serve, "chat-serve start");
      assert.match(init.stdout, /next:\n {2}yarn install\n {2}yarn chat-serve start\n/u);
      assert.doesNotMatch(init.stdout, /npm install|\.npmrc|\.tgz/u, "nothing of npm's, no copy of chat-serve placed");
    } finally {
      rmSync(yarnProject, { recursive: true, force: true });
    }
  });

  test("enable_custom_route_auth puts the project's routes behind its Auth", async () => {
    const config = JSON.parse(readFileSync(path.join(dir, "langgraph.json"), "utf8"));
    writeFileSync(
      path.join(dir, "langgraph.json"),
      JSON.stringify({ ...config, http: { ...config.http, enable_custom_route_auth: true } }),
    );
    const guarded = await startCli([], { cwd: dir, env: { NODE_PATH: path.join(REPO_ROOT, "node_modules") } });
    try {
      const at = new URL(guarded.baseURL).origin;
      assert.equal((await fetch(`${at}/hello`)).status, 401);
      const alice = await fetch(`${at}/hello`, { headers: { authorization: "Bearer token-alice" } });
      assert.equal(alice.status, 200);
    } finally {
      await guarded.stop();
    }
  });

  test("refuses to start, in one line naming the file and the key", async () => {
    writeFileSync(path.join(dir, "src/auth.ts"), 'throw new Error("the auth module is broken");\nexport const auth = 1;\n');
    // The project resolves chat-serve's own packages (the fixture has no node_modules of its own).
    const result = await runCli(["start", "--port", "0"], { cwd: dir, env: { NODE_PATH: path.join(REPO_ROOT, "node_modules") } });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /langgraph\.json: auth\.path: .*the auth module is broken/u);
    assert.doesNotMatch(result.stdout, /ready http/u);
  });

  test("an export that is no Auth refuses to start too", async () => {
    writeFileSync(path.join(dir, "src/auth.ts"), "export const auth = { authenticate: () => 'anyone' };\n");
    const result = await runCli(["start", "--port", "0"], { cwd: dir, env: { NODE_PATH: path.join(REPO_ROOT, "node_modules") } });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /langgraph\.json: auth\.path: must be an Auth of @langchain\/langgraph-sdk\/auth/u);
  });
});

describe("a semantic store on Postgres", () => {
  test("serves semantic search where pgvector is installed, and refuses to start, in one line, where it is not", async (t) => {
    const { skip } = await requirePostgres();
    if (skip) return t.skip(skip);
    const schema = uniqueSchema();
    const project = tempProject({
      "graph.ts": ECHO_GRAPH_MODULE,
      "embed.ts": readFileSync(path.join(FIXTURE, "src/embed.ts"), "utf8"),
      "chat-serve.config.ts": `import { defineConfig } from "chat-serve";
export default defineConfig({
  server: { port: 0 },
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  graphs: { echo: { graph: "./graph.ts:graph", description: "Echo" } },
  graphStore: { index: { embed: "./embed.ts:embed", dims: 3 } },
});
`,
    });
    const pg = new pgClient({ connectionString: POSTGRES_URL });
    await pg.connect();
    try {
      const available = (await pg.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).rowCount! > 0;
      if (!available) {
        const result = await runCli(["start", "--port", "0"], { cwd: project.dir });
        assert.notEqual(result.code, 0);
        assert.match(
          result.stderr,
          /chat-serve\.config\.ts: graphStore\.index: a semantic store needs the pgvector extension, which the Postgres at 127\.0\.0\.1:5432 does not have: install it/u,
        );
        assert.equal(result.stderr.trim().split("\n").length, 1, "one line");
        return;
      }
      const server = await startCli([], { cwd: project.dir });
      try {
        const client = new Client({ apiUrl: new URL(server.baseURL).origin });
        await client.store.putItem(["notes"], "pets", { text: "my cat likes to purr" });
        await client.store.putItem(["notes"], "forecast", { text: "rain and a storm" });
        const found = await client.store.searchItems(["notes"], { query: "kitten", limit: 2 });
        assert.equal(found.items[0]?.key, "pets");
      } finally {
        await server.stop();
      }
    } finally {
      await pg.end();
      await dropSchema(schema);
      project.cleanup();
    }
  });
});

describe("a project's Auth on two processes over Postgres and Redis", () => {
  test("each user's threads and runs are theirs on every replica; another's is not found on any", async (t) => {
    const services = await requireRedisAndPostgres();
    if (services) return t.skip(services);
    const schema = uniqueSchema();
    const project = tempProject({
      "auth.ts": readFileSync(path.join(FIXTURE, "src/auth.ts"), "utf8"),
      "agent.ts": readFileSync(path.join(FIXTURE, "src/agent.ts"), "utf8"),
      "chat-serve.config.ts": `export default {
  checkpointer: { kind: "postgres", url: ${JSON.stringify(POSTGRES_URL)}, schema: ${JSON.stringify(schema)} },
  coordinator: { kind: "redis", url: ${JSON.stringify(REDIS_URL)}, keyPrefix: ${JSON.stringify(uniquePrefix())} },
  background: { keyPrefix: ${JSON.stringify(`cs-bg-${schema}`)} },
  auth: { custom: "./auth.ts:auth" },
  graphs: { agent: { graph: "./agent.ts:graph", description: "says who asks" } },
};`,
    });
    const servers: RunningServer[] = [];
    try {
      servers.push(await startCli([], { cwd: project.dir }), await startCli([], { cwd: project.dir }));
      const [one, two] = servers.map((server) => new URL(server.baseURL).origin) as [string, string];
      const client = (origin: string, token: string) =>
        new Client({ apiUrl: origin, defaultHeaders: { authorization: `Bearer ${token}` } });
      const thread = await client(one, "token-alice").threads.create();
      // A run made through the other replica: queued, run by either, its thread alice's.
      const waited = (await client(two, "token-alice").runs.wait(thread.thread_id, "agent", { input: input("hi") })) as {
        messages: { content: string }[];
      };
      assert.equal(waited.messages.at(-1)?.content, "alice said: hi");
      const [run] = await client(one, "token-alice").runs.list(thread.thread_id);
      assert.ok(run !== undefined);
      for (const origin of [one, two]) {
        const bob = client(origin, "token-bob");
        await assert.rejects(bob.threads.get(thread.thread_id), /404/u);
        await assert.rejects(bob.runs.get(thread.thread_id, run.run_id), /404/u);
        await assert.rejects(bob.runs.wait(thread.thread_id, "agent", { input: input("mine") }), /404/u);
        assert.ok(!(await bob.threads.search()).some((found) => found.thread_id === thread.thread_id));
        assert.ok((await client(origin, "token-alice").threads.search()).some((found) => found.thread_id === thread.thread_id));
      }
    } finally {
      for (const server of servers) await server.stop();
      await dropSchema(schema);
      project.cleanup();
    }
  });
});
