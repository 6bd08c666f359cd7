import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

// The house's floors, top to bottom (ARCHITECTURE.md): an import may only point to its own
// folder or a lower floor. The package root (src/index.ts) and chat-serve/testing sit above all.
const FLOORS: Record<string, number> = {
  cli: 9,
  server: 8,
  config: 7,
  http: 6,
  // The chat-ui profile is the chat wire for chat UIs: built on the chat dialect, below http.
  "dialects/chat-ui": 5.5,
  "dialects/chat": 5,
  "dialects/responses": 5,
  // MCP tool schemas, results and elicitations: the run's output as MCP sees it.
  "dialects/mcp": 5,
  // A2A cards, task snapshots and task events: the run's output as A2A sees it.
  "dialects/a2a": 5,
  runs: 4,
  registry: 3,
  coordination: 2,
  events: 2,
  // The OpenAI request parameters: normalised types, checks, and the helpers graph code calls.
  parameters: 2,
  settings: 2,
  // Stored responses, conversations and chat sessions: the interface and its two implementations.
  store: 2,
  tracing: 2,
  util: 1,
  errors: 0,
  wire: 0,
};
const FRAMEWORKS = ["fastify", "commander", "chalk"];
const SRC = fileURLToPath(new URL("../../src", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : full.endsWith(".ts") ? [full] : [];
  });
}

function folderOf(file: string): string | undefined {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts.length < 2) return undefined;
  return parts[0] === "dialects" ? `dialects/${parts[1]}` : parts[0];
}

test("imports run one way: down the floors, never up or sideways", () => {
  const problems: string[] = [];
  for (const file of files(SRC)) {
    const from = folderOf(file);
    if (from === undefined || from === "testing") continue;
    assert.ok(from in FLOORS, `src/${from} has no floor: add it to this test and to ARCHITECTURE.md`);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/gu)) {
      if (specifier === undefined) continue;
      if (!specifier.startsWith(".")) {
        if (FLOORS[from]! <= FLOORS.runs! && FRAMEWORKS.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
          problems.push(`${path.relative(SRC, file)} imports ${specifier}: only http/ and above may`);
        }
        continue;
      }
      const to = folderOf(path.resolve(path.dirname(file), specifier));
      if (to === undefined || to === from) continue;
      if (!(FLOORS[to]! < FLOORS[from]!)) problems.push(`${path.relative(SRC, file)} (${from}) imports ${specifier} (${to})`);
    }
  }
  assert.deepEqual(problems, []);
});
