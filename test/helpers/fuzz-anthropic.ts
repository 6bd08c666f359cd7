import { type FuzzCase, fuzzCase, type Random, randomString, randomValue } from "./fuzz-bodies.js";

// Bodies for the Anthropic Messages surface: requests as the Anthropic SDKs and Claude Code
// send them, with mutated roles, blocks (text, images, documents, tool use and results,
// thinking, unknown types), system prompts, tools, tool choices, thinking and limits; and now
// and then a chat-completions fuzz body or a bare value.

function block(random: Random, role: string): unknown {
  const roll = random.next();
  if (roll < 0.35)
    return {
      type: "text",
      text: random.chance(0.9) ? randomString(random) : randomValue(random),
      ...(random.chance(0.2) ? { cache_control: { type: "ephemeral" } } : {}),
    };
  if (roll < 0.45) {
    return {
      type: random.pick(["image", "document"]),
      source: random.pick([
        { type: "base64", media_type: random.pick(["image/png", "application/pdf", ""]), data: "aGVsbG8=" },
        { type: "url", url: randomString(random) },
        { type: "text", media_type: "text/plain", data: randomString(random) },
        { type: "content", content: [{ type: "text", text: "x" }] },
        randomValue(random),
      ]),
    };
  }
  if (roll < 0.6)
    return {
      type: "tool_use",
      id: random.pick(["toolu_1", "toolu_2", "", 5]),
      name: random.pick(["get_weather", "graph_interrupt", ""]),
      input: random.chance(0.8) ? { city: "Oslo" } : randomValue(random),
    };
  if (roll < 0.75) {
    return {
      type: "tool_result",
      tool_use_id: random.pick(["toolu_1", "toolu_2", "", 5]),
      ...(random.chance(0.8) ? { content: random.chance(0.5) ? randomString(random) : [{ type: "text", text: "12 degrees" }] } : {}),
      ...(random.chance(0.2) ? { is_error: random.pick([true, false, "yes"]) } : {}),
    };
  }
  if (roll < 0.85)
    return {
      type: random.pick(["thinking", "redacted_thinking", "server_tool_use", "search_result", "video", ""]),
      thinking: "hmm",
      signature: "s",
    };
  return role === "user" && random.chance(0.5) ? randomString(random) : randomValue(random);
}

function message(random: Random): unknown {
  if (random.chance(0.05)) return randomValue(random);
  const role = random.pick(["user", "assistant", "user", "system", "", null]);
  return {
    role,
    content: random.chance(0.4)
      ? randomString(random)
      : random.chance(0.95)
        ? Array.from({ length: random.int(4) }, () => block(random, String(role)))
        : randomValue(random),
  };
}

/** A Messages body, mostly as a client sends it; or a chat-completions fuzz body. */
export function anthropicFuzzCase(random: Random): FuzzCase {
  if (random.chance(0.1)) return fuzzCase(random);
  const plain = random.chance(0.3);
  const body: Record<string, unknown> = {
    model: random.chance(0.95) ? random.pick(["echo", "counter"]) : randomValue(random),
    messages: plain
      ? [{ role: "user", content: random.pick(["hello", "what now?"]) }]
      : random.chance(0.95)
        ? Array.from({ length: random.int(5) }, () => message(random))
        : randomValue(random),
  };
  if (random.chance(0.9)) body.max_tokens = random.chance(0.9) ? random.pick([16, 256, 4096]) : randomValue(random);
  if (random.chance(0.5)) body.stream = random.chance(0.9) ? random.chance(0.6) : randomValue(random);
  if (random.chance(0.3))
    body.system = random.pick([
      randomString(random),
      [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      randomValue(random),
    ]);
  if (random.chance(0.3)) {
    body.tools = random.chance(0.85)
      ? [
          {
            name: random.pick(["get_weather", "mcp__files__read", "bad name"]),
            description: "x",
            input_schema: random.chance(0.9) ? { type: "object" } : randomValue(random),
          },
        ]
      : randomValue(random);
  }
  if (random.chance(0.2))
    body.tool_choice = random.pick([
      { type: "auto" },
      { type: "any" },
      { type: "tool", name: "get_weather" },
      { type: "none" },
      randomValue(random),
    ]);
  if (random.chance(0.2))
    body.thinking = random.pick([
      { type: "enabled", budget_tokens: random.pick([1024, 10, 20_000]) },
      { type: "disabled" },
      { type: "adaptive" },
      randomValue(random),
    ]);
  if (random.chance(0.2)) body.metadata = random.pick([{ user_id: "u" }, { session_id: randomString(random) }, randomValue(random)]);
  if (random.chance(0.1)) body.temperature = randomValue(random);
  if (random.chance(0.1)) body.stop_sequences = random.chance(0.5) ? ["\n\n"] : randomValue(random);
  return { payload: JSON.stringify(body), contentType: "application/json" };
}
