import { type FuzzCase, fuzzCase, type Random, randomString, randomValue } from "./fuzz-bodies.js";

// Bodies for the AI SDK surface: the chat fuzz bodies as they are, and useChat's requests with
// mutated ids, roles, parts (text, files, tool parts of every state, unknown types) and settings.

const TOOL_STATES = [
  "input-streaming",
  "input-available",
  "output-available",
  "output-error",
  "output-denied",
  "approval-requested",
  "done",
  "",
];

function part(random: Random): unknown {
  const roll = random.next();
  if (roll < 0.45) return { type: "text", text: random.chance(0.9) ? randomString(random) : randomValue(random) };
  if (roll < 0.55) return { type: "file", mediaType: random.pick(["image/png", "application/pdf", "", 3]), url: randomString(random) };
  if (roll < 0.8) {
    return {
      type: random.pick(["tool-get_weather", "tool-graph_interrupt", "dynamic-tool", "tool-", "tool"]),
      ...(random.chance(0.8) ? { toolCallId: random.pick(["call_1", randomString(random), "", 7]) } : {}),
      state: random.pick(TOOL_STATES),
      ...(random.chance(0.7) ? { input: randomValue(random) } : {}),
      ...(random.chance(0.5) ? { output: randomValue(random) } : {}),
      ...(random.chance(0.2) ? { errorText: randomString(random) } : {}),
    };
  }
  if (roll < 0.9) return { type: random.pick(["reasoning", "step-start", "source-url", "data-status", "data-", "image"]), text: "x" };
  return randomValue(random);
}

function message(random: Random): unknown {
  if (random.chance(0.05)) return randomValue(random);
  return {
    id: random.chance(0.9) ? randomString(random) : randomValue(random),
    role: random.pick(["user", "assistant", "system", "tool", "", null]),
    parts: random.chance(0.95) ? Array.from({ length: random.int(4) }, () => part(random)) : randomValue(random),
  };
}

/** A user's turn as useChat sends it, unmutated: the fuzzer also reaches runs. */
function plainTurn(random: Random): unknown {
  return { id: `m${random.int(1000)}`, role: "user", parts: [{ type: "text", text: random.pick(["hello", "what now?", "again"]) }] };
}

/** A body as useChat sends it, mostly; or a chat-completions fuzz body. */
export function aiSdkFuzzCase(random: Random): FuzzCase {
  if (random.chance(0.15)) return fuzzCase(random);
  const mutated = () => Array.from({ length: random.int(4) + (random.chance(0.8) ? 1 : 0) }, () => message(random));
  const body: Record<string, unknown> = {
    id: random.chance(0.9) ? random.pick(["chat-1", "chat-2", randomString(random)]) : randomValue(random),
    messages: random.chance(0.25) ? [plainTurn(random)] : random.chance(0.95) ? mutated() : randomValue(random),
  };
  if (random.chance(0.5)) body.trigger = random.pick(["submit-message", "regenerate-message", "other"]);
  if (random.chance(0.2)) body.settings = random.chance(0.5) ? { depth: random.int(7) } : randomValue(random);
  return { payload: JSON.stringify(body), contentType: "application/json" };
}
