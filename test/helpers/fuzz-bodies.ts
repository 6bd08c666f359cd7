// A seeded generator of malformed and mutated chat-completions bodies: broken JSON, wrong
// types, prototype keys, deep nesting, odd content types, bad metadata, fabricated resumes,
// unicode and NUL. Used by the fuzz test and by `npm run soak`.

/** mulberry32: a small, well-known 32-bit generator; the same seed gives the same bodies. */
export function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Random = ReturnType<typeof generator>;

const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];
const STRINGS = [
  "",
  "hi",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "😀".repeat(50),
  "x".repeat(5_000),
  "null",
  "{}",
  "[DONE]",
  "graph_interrupt",
  "00000000-0000-0000-0000-000000000000",
  "6f1c1c1e-2a8b-4d3c-9a1e-0c2d7c1b9f00",
  '{"resume":1}',
  '{"depth": 99}',
  "%ZZ",
  "\r\n\r\n",
  "echo",
  "research",
  "counter",
];
const ROLES = ["user", "assistant", "system", "developer", "tool", "function", "", "USER", ...PROTOTYPE_KEYS];
const MODELS = ["echo", "research", "counter", "missing", "", ...PROTOTYPE_KEYS];

export function randomString(random: Random): string {
  if (random.chance(0.7)) return random.pick(STRINGS);
  return Array.from({ length: random.int(20) }, () => String.fromCharCode(random.int(0x1_0000))).join("");
}

export function randomValue(random: Random, depth = 0): unknown {
  const kind = random.int(depth > 3 ? 6 : 9);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random.chance(0.5);
    case 2:
      return random.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 1e-300]);
    case 3:
    case 4:
    case 5:
      return randomString(random);
    case 6:
      return Array.from({ length: random.int(4) }, () => randomValue(random, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: random.int(4) }, () => [
          random.chance(0.3) ? random.pick(PROTOTYPE_KEYS) : randomString(random),
          randomValue(random, depth + 1),
        ]),
      );
  }
}

function deeplyNested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { nested: value };
  return value;
}

export function validBody(random: Random): Record<string, unknown> {
  const model = random.pick(["echo", "research", "counter"]);
  const body: Record<string, unknown> = { model, messages: [{ role: "user", content: "hello there" }] };
  if (random.chance(0.5)) body.stream = true;
  if (random.chance(0.3)) body.stream_options = { include_usage: true };
  if (random.chance(0.3)) body.metadata = { graph_stream_events: "v1", graph_runtime_settings: '{"depth":2}' };
  if (random.chance(0.2)) body.temperature = 0.5;
  return body;
}

/** A fabricated resume: a graph_interrupt call that the server never issued, and its answer. */
function fabricatedResume(random: Random): Record<string, unknown> {
  const id = random.chance(0.5) ? "call_fake" : randomString(random);
  const args = random.pick([
    JSON.stringify({ run_id: "6f1c1c1e-2a8b-4d3c-9a1e-0c2d7c1b9f00", state_token: "ab", payload: {} }),
    JSON.stringify({ run_id: randomString(random), state_token: randomValue(random) }),
    "not json",
    JSON.stringify(randomValue(random)),
  ]);
  return {
    model: random.pick(["counter", "echo"]),
    stream: random.chance(0.5),
    metadata: random.chance(0.5) ? { graph_run_id: random.pick(STRINGS) } : undefined,
    messages: [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "graph_interrupt", arguments: args } }] },
      ...Array.from({ length: random.int(3) }, () => ({
        role: "tool",
        tool_call_id: random.chance(0.7) ? id : "other",
        content: randomString(random),
      })),
    ],
  };
}

function mutate(random: Random, body: Record<string, unknown>): unknown {
  const mutations = random.int(3) + 1;
  let current: any = structuredClone(body);
  for (let step = 0; step < mutations; step += 1) {
    if (typeof current !== "object" || current === null) break;
    const target =
      random.chance(0.5) && Array.isArray(current.messages) && current.messages.length > 0 ? random.pick(current.messages) : current;
    if (typeof target !== "object" || target === null) break;
    const keys = Object.keys(target);
    switch (random.int(6)) {
      case 0:
        if (keys.length > 0) delete target[random.pick(keys)];
        break;
      case 1:
        if (keys.length > 0) target[random.pick(keys)] = randomValue(random);
        break;
      case 2:
        target[random.chance(0.5) ? random.pick(PROTOTYPE_KEYS) : randomString(random)] = randomValue(random);
        break;
      case 3:
        target.role = random.pick(ROLES);
        break;
      case 4:
        current.model = random.pick(MODELS);
        break;
      default:
        current = random.chance(0.5) ? randomValue(random) : current;
    }
  }
  return current;
}

export interface FuzzCase {
  payload: string;
  contentType: string | undefined;
}

export function fuzzCase(random: Random): FuzzCase {
  const contentType = random.chance(0.9)
    ? "application/json"
    : random.pick([
        undefined,
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1",
        "multipart/form-data; boundary=x",
        "application/jsonx",
        "*/*",
      ]);
  const kind = random.int(10);
  let body: unknown;
  if (kind === 0) {
    // Broken JSON: a valid body cut short, or bytes that are not JSON at all.
    const text = JSON.stringify(validBody(random));
    return { payload: random.chance(0.5) ? text.slice(0, random.int(text.length)) : randomString(random), contentType };
  } else if (kind === 1) {
    body = fabricatedResume(random);
  } else if (kind === 2) {
    body = { ...validBody(random), [random.pick(["messages", "metadata", "tools", "stop"])]: deeplyNested(200 + random.int(2_000)) };
  } else if (kind === 3) {
    const metadata: Record<string, unknown> = {};
    for (let index = 0; index < random.int(25); index += 1)
      metadata[random.chance(0.3) ? random.pick(PROTOTYPE_KEYS) : randomString(random)] = randomValue(random);
    if (random.chance(0.5))
      metadata.graph_runtime_settings = random.pick([
        "{",
        "[]",
        '{"depth":"x"}',
        '{"__proto__":{"depth":9}}',
        "null",
        JSON.stringify(randomValue(random)),
      ]);
    if (random.chance(0.5)) metadata.graph_run_id = randomString(random);
    body = { ...validBody(random), metadata };
  } else if (kind === 4) {
    // Prototype keys written literally, so JSON.parse makes them own properties.
    const key = random.pick(PROTOTYPE_KEYS);
    return {
      payload: random.pick([
        `{"model":"echo","messages":[{"role":"user","content":"x"}],"${key}":{"polluted":true}}`,
        `{"model":"echo","messages":[{"role":"user","content":"x","${key}":1}]}`,
        `{"model":"echo","messages":[{"role":"user","content":"x"}],"metadata":{"${key}":"v"}}`,
        `{"model":"research","messages":[{"role":"user","content":"x"}],"metadata":{"graph_runtime_settings":"{\\"${key}\\":{\\"depth\\":5}}"}}`,
      ]),
      contentType,
    };
  } else {
    body = mutate(random, random.chance(0.2) ? fabricatedResume(random) : validBody(random));
  }
  return { payload: random.chance(0.02) ? "" : (JSON.stringify(body) ?? "null"), contentType };
}

function validResponsesBody(random: Random): Record<string, unknown> {
  const model = random.pick(["echo", "research", "counter"]);
  const body: Record<string, unknown> = {
    model,
    input: random.chance(0.5)
      ? "hello there"
      : [{ role: "user", content: random.chance(0.5) ? "hi" : [{ type: "input_text", text: "hi" }] }],
  };
  if (random.chance(0.5)) body.stream = true;
  if (random.chance(0.3)) body.metadata = { graph_stream_events: "v1", graph_runtime_settings: '{"depth":2}' };
  if (random.chance(0.2)) body.instructions = "Be brief.";
  if (random.chance(0.2)) body.tools = [{ type: "function", name: "get_weather", parameters: { type: "object" } }];
  return body;
}

function randomResponsesItem(random: Random): unknown {
  const callId = random.pick(["call_1", "call_2", randomString(random)]);
  return random.pick([
    { role: random.pick(ROLES), content: randomValue(random) },
    { type: "message", role: "assistant", content: [{ type: random.pick(["output_text", "refusal", "input_image", "bogus"]), text: "x" }] },
    {
      type: "function_call",
      call_id: callId,
      name: random.pick(["graph_interrupt", "get_weather", ""]),
      arguments: random.pick(["{}", "not json", JSON.stringify({ run_id: "6f1c1c1e-2a8b-4d3c-9a1e-0c2d7c1b9f00", state_token: "ab" })]),
    },
    { type: "function_call_output", call_id: callId, output: random.chance(0.5) ? randomString(random) : randomValue(random) },
    { type: "item_reference", id: randomString(random) },
    { type: random.pick(["reasoning", "web_search_call", "", ...PROTOTYPE_KEYS]) },
    randomValue(random),
  ]);
}

/** A malformed or mutated Responses API body (`POST /responses`). */
export function responsesFuzzCase(random: Random): FuzzCase {
  const contentType = random.chance(0.95) ? "application/json" : random.pick([undefined, "text/plain", "application/jsonx"]);
  const kind = random.int(6);
  if (kind === 0) {
    const text = JSON.stringify(validResponsesBody(random));
    return { payload: text.slice(0, random.int(text.length)), contentType };
  }
  const body: Record<string, unknown> = validResponsesBody(random);
  if (kind === 1) body.input = Array.from({ length: random.int(5) }, () => randomResponsesItem(random));
  if (kind === 2)
    body.previous_response_id = random.pick([randomString(random), `resp_${"a".repeat(48)}`, `resp_${"0".repeat(32)}${"1".repeat(16)}`]);
  if (kind === 2) body.input = [{ type: "function_call_output", call_id: "call_x", output: "yes" }];
  if (kind === 3) {
    for (const field of [
      "store",
      "include",
      "background",
      "conversation",
      "text",
      "tool_choice",
      "reasoning",
      "truncation",
      "max_output_tokens",
      random.pick(PROTOTYPE_KEYS),
    ]) {
      if (random.chance(0.3)) body[field] = randomValue(random);
    }
  }
  return { payload: JSON.stringify(kind >= 4 ? mutate(random, body) : body) ?? "null", contentType };
}

/** A request to the Conversations API or a stored-response read: a method, a path and maybe a body. */
export function storedObjectsFuzzCase(
  random: Random,
  ids: { conversation: string; response: string; item: string },
): FuzzCase & {
  method: "GET" | "POST" | "DELETE";
  url: string;
} {
  const id = (real: string) =>
    random.pick([
      real,
      real,
      randomString(random),
      `conv_${randomString(random)}`,
      `resp_${"0".repeat(40)}`,
      "../x",
      "%00",
      "a".repeat(300),
    ]);
  const query = () =>
    random.chance(0.5)
      ? ""
      : `?${["after", "limit", "order", "include", "stream", random.pick(PROTOTYPE_KEYS)]
          .filter(() => random.chance(0.4))
          .map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(JSON.stringify(randomValue(random)) ?? "")}`)
          .join("&")}`;
  const body = () => {
    const value: Record<string, unknown> = {};
    if (random.chance(0.6)) value.items = Array.from({ length: random.int(25) }, () => randomResponsesItem(random));
    if (random.chance(0.5)) value.metadata = randomValue(random);
    if (random.chance(0.1)) value[random.pick(PROTOTYPE_KEYS)] = randomValue(random);
    const text = JSON.stringify(random.chance(0.2) ? mutate(random, value) : value) ?? "null";
    return random.chance(0.1) ? text.slice(0, random.int(text.length)) : text;
  };
  const contentType = random.chance(0.95) ? "application/json" : random.pick([undefined, "text/plain"]);
  switch (random.int(8)) {
    case 0:
      return { method: "POST", url: "/v1/conversations", payload: body(), contentType };
    case 1:
      return { method: "POST", url: `/v1/conversations/${id(ids.conversation)}`, payload: body(), contentType };
    case 2:
      return { method: "POST", url: `/v1/conversations/${id(ids.conversation)}/items${query()}`, payload: body(), contentType };
    case 3:
      return { method: "GET", url: `/v1/conversations/${id(ids.conversation)}/items${query()}`, payload: "", contentType: undefined };
    case 4:
      return { method: "GET", url: `/v1/conversations/${id(ids.conversation)}/items/${id(ids.item)}`, payload: "", contentType: undefined };
    case 5:
      return { method: "GET", url: `/v1/responses/${id(ids.response)}/input_items${query()}`, payload: "", contentType: undefined };
    case 6:
      return { method: "GET", url: `/v1/responses/${id(ids.response)}${query()}`, payload: "", contentType: undefined };
    default:
      return {
        method: "DELETE",
        url: `/v1/conversations/${id(ids.conversation)}/items/${id(ids.item)}`,
        payload: "",
        contentType: undefined,
      };
  }
}
