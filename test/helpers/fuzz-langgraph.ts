// A seeded generator of Agent Protocol requests: valid bodies of every route group, mutated
// (wrong types, prototype keys, odd stream modes, commands with input, namespaces with empty
// or odd labels, checkpoint ids and namespaces an object has of its own, repeated query
// parameters, message content of any type), on real and made-up thread and run ids, with
// broken JSON now and then.

import { AGENT_STREAM_MODES } from "../../src/runs/agent/agent-stream.js";
import { MULTITASK_STRATEGIES } from "../../src/store/agent-records.js";
import { type Random, randomString, randomValue } from "./fuzz-bodies.js";

export interface LangGraphFuzzCase {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  url: string;
  payload?: string;
  contentType?: string;
}

const ASSISTANTS = ["echo", "counter", "research", "missing", "", "__proto__", "046b5dc7-2108-582c-9c6c-31d556d138f0"];
const MODES = [...AGENT_STREAM_MODES, "everything", "", 7];
const IDS = ["", "%ZZ", "__proto__", "constructor", "00000000-0000-0000-0000-000000000000", "a/b", "x".repeat(300), "😀"];

function runBody(random: Random): Record<string, unknown> {
  const body: Record<string, unknown> = { assistant_id: random.pick(ASSISTANTS) };
  if (random.chance(0.7))
    body.input = {
      messages: [
        {
          role: random.pick(["user", "human", "ai", "tool", ""]),
          content: random.chance(0.85) ? randomString(random) : random.pick([5, true, { text: "x" }, null, [{ type: "text", text: "x" }]]),
        },
      ],
    };
  if (random.chance(0.2))
    body.command = random.pick([
      { resume: randomValue(random) },
      { goto: randomString(random) },
      { update: randomValue(random) },
      randomValue(random),
    ]);
  if (random.chance(0.5)) body.stream_mode = random.chance(0.5) ? random.pick(MODES) : [random.pick(MODES), random.pick(MODES)];
  if (random.chance(0.2)) body.stream_subgraphs = random.chance(0.8) ? random.chance(0.5) : randomValue(random);
  if (random.chance(0.2)) body.multitask_strategy = random.pick([...MULTITASK_STRATEGIES, "other"]);
  if (random.chance(0.2)) body.if_not_exists = random.pick(["create", "reject", 1]);
  if (random.chance(0.2))
    body.config = random.pick([
      { recursion_limit: random.int(4) },
      { configurable: randomValue(random) },
      { tags: randomValue(random) },
      randomValue(random),
    ]);
  if (random.chance(0.1)) body.interrupt_before = random.pick(["*", ["respond"], [1], "all"]);
  if (random.chance(0.1)) body.checkpoint_id = random.chance(0.5) ? randomString(random) : random.pick(IDS);
  if (random.chance(0.05)) body.checkpoint = { checkpoint_id: random.pick(IDS), checkpoint_ns: random.pick(["", "__proto__", "a:b", 3]) };
  if (random.chance(0.1)) body.context = randomValue(random);
  if (random.chance(0.1)) body.metadata = randomValue(random);
  return body;
}

const STORE_NAMESPACES = [["a"], ["a", "b"], [], [""], ["a.b"], [1], "a", ["chat-serve-tenant", "x"], null];

/** A path segment or query value of any string (a lone surrogate cannot be percent-encoded: `x` then). */
function encoded(text: string, empty = ""): string {
  try {
    return encodeURIComponent(text) || empty;
  } catch {
    return "x";
  }
}

/** One request: a route and a body (valid, mutated, or not JSON at all). */
export function langgraphFuzzCase(random: Random, threads: readonly string[]): LangGraphFuzzCase {
  const thread = random.chance(0.7) && threads.length > 0 ? random.pick(threads) : encoded(random.pick(IDS), "t");
  const routes: [LangGraphFuzzCase["method"], string, () => unknown][] = [
    ["POST", "/runs/wait", () => runBody(random)],
    ["POST", "/runs/stream", () => runBody(random)],
    ["POST", `/threads/${thread}/runs/wait`, () => runBody(random)],
    ["POST", `/threads/${thread}/runs/stream`, () => runBody(random)],
    ["POST", `/threads/${thread}/runs`, () => runBody(random)],
    [
      "POST",
      "/threads",
      () => ({
        thread_id: random.chance(0.5) ? randomString(random) : undefined,
        metadata: randomValue(random),
        if_exists: random.pick(["raise", "do_nothing", 3]),
      }),
    ],
    [
      "POST",
      "/threads/search",
      () => ({
        metadata: randomValue(random),
        limit: random.pick([1, 10, 0, -1, "ten", 5000]),
        sort_by: random.pick(["created_at", "x"]),
        values: randomValue(random),
      }),
    ],
    ["POST", "/threads/count", () => ({ status: random.pick(["idle", "busy", "nope"]) })],
    ["PATCH", `/threads/${thread}`, () => ({ metadata: randomValue(random) })],
    ["GET", `/threads/${thread}`, () => undefined],
    ["GET", `/threads/${thread}/state`, () => undefined],
    ["GET", `/threads/${thread}/state/${encoded(random.chance(0.5) ? randomString(random) : random.pick(IDS), "c")}`, () => undefined],
    [
      "POST",
      `/threads/${thread}/state/checkpoint`,
      () => ({ checkpoint: { checkpoint_id: random.pick(IDS), checkpoint_ns: random.pick(["", "__proto__"]) } }),
    ],
    [
      "POST",
      `/threads/${thread}/state`,
      () => ({
        values: randomValue(random),
        as_node: random.pick(["respond", "missing", 1, undefined]),
        ...(random.chance(0.3) ? { checkpoint_id: random.pick(IDS) } : {}),
      }),
    ],
    [
      "POST",
      `/threads/${thread}/history`,
      () => ({ limit: random.pick([1, 5, 0, "x"]), before: random.chance(0.5) ? randomValue(random) : random.pick(IDS) }),
    ],
    ["POST", `/threads/${thread}/copy`, () => undefined],
    ["GET", `/threads/${thread}/runs`, () => undefined],
    ["GET", `/threads/${thread}/runs/${encoded(random.pick(IDS), "r")}`, () => undefined],
    ["POST", `/threads/${thread}/runs/${encoded(random.pick(IDS), "r")}/cancel`, () => undefined],
    ["POST", "/assistants/search", () => ({ graph_id: randomValue(random), limit: random.pick([1, 100, 0]) })],
    ["GET", `/assistants/${encoded(random.pick(ASSISTANTS), "a")}/schemas`, () => undefined],
    ["PUT", "/store/items", () => ({ namespace: random.pick(STORE_NAMESPACES), key: randomString(random), value: randomValue(random) })],
    [
      "POST",
      "/store/items/search",
      () => ({ namespace_prefix: random.pick(STORE_NAMESPACES), filter: randomValue(random), limit: random.pick([1, 10, 0]) }),
    ],
    ["POST", "/store/namespaces", () => ({ prefix: random.pick(STORE_NAMESPACES), max_depth: random.pick([1, 0, "2"]) })],
    ["GET", `/store/items?namespace=${encoded(randomString(random))}&key=${encoded(randomString(random))}`, () => undefined],
    [
      "GET",
      `/store/items?namespace=a&namespace=${encoded(randomString(random))}&key=k${random.chance(0.5) ? "&key=j" : ""}`,
      () => undefined,
    ],
    ["DELETE", "/store/items", () => ({ namespace: random.pick(STORE_NAMESPACES), key: randomValue(random) })],
    // Protocol v2's commands (its event stream never ends by itself: it is not fuzzed through inject).
    [
      "POST",
      `/threads/${thread}/commands`,
      () => ({
        id: random.pick([1, 0, -1, 2.5, "1", undefined]),
        method: random.pick(["run.start", "input.respond", "state.get", "agent.getTree", "subscription.subscribe", "nope", "", 3]),
        params: random.pick([
          runBody(random),
          { interrupt_id: randomString(random), response: randomValue(random) },
          { responses: randomValue(random) },
          { keys: randomValue(random), namespace: random.pick([[], ["a"], "x"]) },
          randomValue(random),
          undefined,
        ]),
      }),
    ],
  ];
  const [method, url, body] = random.pick(routes);
  const value = body();
  if (value === undefined || method === "GET") return { method, url };
  if (random.chance(0.05))
    return { method, url, payload: random.pick(["{", '{"assistant_id":', "[]", "null", "1", '"x"']), contentType: "application/json" };
  if (random.chance(0.03))
    return { method, url, payload: "assistant_id=echo", contentType: random.pick(["text/plain", "application/x-www-form-urlencoded"]) };
  return { method, url, payload: JSON.stringify(value), contentType: "application/json" };
}
