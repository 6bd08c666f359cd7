import { type FuzzCase, fuzzCase, type Random, randomString, randomValue } from "./fuzz-bodies.js";

// Bodies for an A2A endpoint: the chat fuzz bodies as they are, and JSON-RPC requests of both
// protocol versions with mutated envelopes, methods, messages, parts and task ids.

const METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "CancelTask",
  "SubscribeToTask",
  "ListTasks",
  "GetExtendedAgentCard",
  "CreateTaskPushNotificationConfig",
  "message/send",
  "message/stream",
  "tasks/get",
  "tasks/cancel",
  "tasks/resubscribe",
  "",
  "__proto__",
];

function part(random: Random): unknown {
  const roll = random.next();
  if (roll < 0.5) return random.chance(0.5) ? { text: randomString(random) } : { kind: "text", text: randomString(random) };
  if (roll < 0.7) return { data: randomValue(random) };
  if (roll < 0.8) return { url: randomString(random) };
  return randomValue(random);
}

function message(random: Random): unknown {
  if (random.chance(0.1)) return randomValue(random);
  const value: Record<string, unknown> = {
    messageId: random.chance(0.9) ? randomString(random) : randomValue(random),
    role: random.pick(["ROLE_USER", "ROLE_AGENT", "user", "agent", 1, "", null]),
    parts: random.chance(0.9) ? Array.from({ length: random.int(3) }, () => part(random)) : randomValue(random),
  };
  if (random.chance(0.3)) value.taskId = random.pick(["no-such-task", randomString(random), ""]);
  if (random.chance(0.3)) value.contextId = random.pick(["ctx", randomString(random), ""]);
  if (random.chance(0.2)) value.metadata = random.chance(0.5) ? { settings: randomValue(random) } : randomValue(random);
  if (random.chance(0.1)) value[randomString(random)] = randomValue(random);
  return value;
}

function params(random: Random, method: string): unknown {
  if (random.chance(0.1)) return randomValue(random);
  if (/send|stream/iu.test(method)) {
    const value: Record<string, unknown> = { message: message(random) };
    if (random.chance(0.2)) value.configuration = { returnImmediately: random.chance(0.5), historyLength: random.pick([0, 1, -1, "x"]) };
    if (random.chance(0.2)) value.metadata = { settings: random.chance(0.5) ? { depth: random.pick([1, 9, "2"]) } : randomValue(random) };
    return value;
  }
  return {
    id: random.pick(["no-such-task", "", randomString(random)]),
    ...(random.chance(0.2) ? { historyLength: randomValue(random) } : {}),
  };
}

/** One POST body for `{prefix}/a2a/{model}`, and the `A2A-Version` it is sent with. */
export function a2aFuzzCase(random: Random): FuzzCase & { version?: string } {
  if (random.chance(0.2)) return fuzzCase(random);
  const method = random.pick(METHODS);
  const envelope: Record<string, unknown> = {
    jsonrpc: random.chance(0.9) ? "2.0" : random.pick(["1.0", 2, null]),
    id: random.chance(0.9) ? random.int(1000) : random.pick([null, "a", {}, 1.5]),
    method: random.chance(0.95) ? method : randomValue(random),
  };
  if (random.chance(0.9)) envelope.params = params(random, method);
  const text = JSON.stringify(random.chance(0.05) ? [envelope] : envelope);
  return {
    payload: random.chance(0.05) ? text.slice(0, random.int(text.length)) : text,
    contentType: random.chance(0.95) ? "application/json" : random.pick([undefined, "text/plain"]),
    version: method.includes("/") ? random.pick([undefined, "0.3"]) : random.pick(["1.0", "1.0", undefined, "2.0"]),
  };
}
