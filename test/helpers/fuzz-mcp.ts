import { type FuzzCase, fuzzCase, type Random, randomString, randomValue, responsesFuzzCase } from "./fuzz-bodies.js";

// Bodies for the MCP route: the chat and Responses fuzz bodies as they are (every body the
// OpenAI routes survive, this route survives too), and JSON-RPC messages with mutated
// envelopes, methods, tool names and arguments, alone or in batches.

const METHODS = [
  "tools/call",
  "tools/list",
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/list",
  "notifications/cancelled",
  "notifications/initialized",
  "",
  "__proto__",
];
const TOOLS = ["echo", "research", "counter", "resume", "missing", "", "__proto__", "constructor"];

function toolArguments(random: Random): unknown {
  if (random.chance(0.2)) return randomValue(random);
  const args: Record<string, unknown> = {};
  if (random.chance(0.85)) args.message = random.chance(0.7) ? randomString(random) : randomValue(random);
  if (random.chance(0.3)) args.settings = random.chance(0.5) ? { depth: random.pick([1, 2, 9, "2", null]) } : randomValue(random);
  if (random.chance(0.2)) args.conversation = random.chance(0.5) ? `conv_${randomString(random)}` : randomValue(random);
  if (random.chance(0.2)) {
    args.run_id = random.pick(["00000000-0000-4000-8000-000000000000", randomString(random)]);
    args.state_token = randomString(random);
    args.answer = randomString(random);
    args.tool = random.pick(TOOLS);
  }
  if (random.chance(0.1)) args[randomString(random)] = randomValue(random);
  return args;
}

function message(random: Random): unknown {
  const method = random.chance(0.5) ? "tools/call" : random.pick(METHODS);
  const params =
    method === "tools/call"
      ? { name: random.chance(0.9) ? random.pick(TOOLS) : randomValue(random), arguments: toolArguments(random) }
      : method === "initialize"
        ? {
            protocolVersion: random.pick(["2025-11-25", "2024-11-05", "1999-01-01", ""]),
            capabilities: randomValue(random),
            clientInfo: { name: "fuzz", version: "1" },
          }
        : randomValue(random);
  const envelope: Record<string, unknown> = {
    jsonrpc: random.chance(0.9) ? "2.0" : random.pick(["1.0", 2, null, ""]),
    ...(method.startsWith("notifications/") ? {} : { id: random.chance(0.9) ? random.int(1000) : random.pick([null, "a", {}, [], 1.5]) }),
    method: random.chance(0.95) ? method : randomValue(random),
  };
  if (random.chance(0.9)) envelope.params = params;
  if (random.chance(0.05)) return { jsonrpc: "2.0", id: random.int(10), result: randomValue(random) };
  return envelope;
}

/** One POST body for `{prefix}/mcp`. */
export function mcpFuzzCase(random: Random): FuzzCase {
  const roll = random.next();
  if (roll < 0.3) return fuzzCase(random);
  if (roll < 0.45) return responsesFuzzCase(random);
  const body = random.chance(0.1) ? Array.from({ length: random.int(4) }, () => message(random)) : message(random);
  const text = JSON.stringify(body);
  const payload = random.chance(0.05) ? text.slice(0, random.int(text.length)) : text;
  return {
    payload,
    contentType: random.chance(0.95) ? "application/json" : random.pick([undefined, "text/plain", "application/json; charset=utf-8"]),
  };
}
