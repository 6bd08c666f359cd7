import { type FuzzCase, fuzzCase, type Random, randomString, randomValue } from "./fuzz-bodies.js";

// Bodies for the AG-UI surface: the chat fuzz bodies as they are, and RunAgentInputs with
// mutated ids, messages of every role, tools, state and resume entries.

function message(random: Random): unknown {
  if (random.chance(0.05)) return randomValue(random);
  const role = random.pick(["user", "assistant", "system", "developer", "tool", "reasoning", "activity", "", null]);
  const value: Record<string, unknown> = { id: random.chance(0.9) ? randomString(random) : randomValue(random), role };
  if (random.chance(0.85)) value.content = random.chance(0.8) ? randomString(random) : randomValue(random);
  if (role === "assistant" && random.chance(0.3)) {
    value.toolCalls = [
      {
        id: random.pick(["call_1", randomString(random)]),
        type: "function",
        function: { name: "get_weather", arguments: random.pick(["{}", '{"city":"Paris"}', "nope"]) },
      },
    ];
  }
  if (role === "tool") value.toolCallId = random.pick(["call_1", randomString(random), 3]);
  return value;
}

/** A plain user turn: the fuzzer also reaches runs. */
function plainTurn(random: Random): unknown {
  return { id: `m${random.int(1000)}`, role: "user", content: random.pick(["hello", "what now?", "again"]) };
}

/** A RunAgentInput, mostly; or a chat-completions fuzz body. */
export function agUiFuzzCase(random: Random): FuzzCase {
  if (random.chance(0.15)) return fuzzCase(random);
  const body: Record<string, unknown> = {
    threadId: random.chance(0.9) ? random.pick(["thread-1", "thread-2", randomString(random)]) : randomValue(random),
    runId: random.chance(0.9) ? randomString(random) : randomValue(random),
    messages: random.chance(0.3)
      ? [plainTurn(random)]
      : random.chance(0.95)
        ? Array.from({ length: random.int(4) }, () => message(random))
        : randomValue(random),
  };
  if (random.chance(0.3))
    body.tools = random.chance(0.8)
      ? [{ name: "get_weather", description: "weather", parameters: { type: "object" } }]
      : randomValue(random);
  if (random.chance(0.2)) body.context = random.chance(0.8) ? [] : randomValue(random);
  if (random.chance(0.2)) body.state = randomValue(random);
  if (random.chance(0.2)) {
    body.resume = random.chance(0.8)
      ? [
          {
            interruptId: random.pick(["gi_e30", "gi_nope", randomString(random)]),
            status: random.pick(["resolved", "cancelled", "done"]),
            payload: randomValue(random),
          },
        ]
      : randomValue(random);
  }
  return { payload: JSON.stringify(body), contentType: "application/json" };
}
