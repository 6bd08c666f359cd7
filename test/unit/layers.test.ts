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
  // ChatServe and the list of surfaces: the library's assembly of the shared server and every way in.
  app: 7.5,
  config: 7,
  // Each surface (one way in) is a folder of its own: none imports another, and the shared
  // server below knows none of them.
  "surfaces/a2a": 6.7,
  "surfaces/ai-sdk": 6.7,
  "surfaces/ag-ui": 6.7,
  "surfaces/anthropic": 6.7,
  "surfaces/chat": 6.7,
  "surfaces/docs": 6.7,
  "surfaces/langgraph": 6.7,
  "surfaces/mcp": 6.7,
  "surfaces/models": 6.7,
  "surfaces/playground": 6.7,
  "surfaces/responses": 6.7,
  // The shared server: the fastify plugin, the host app, auth, limits, metrics, drain, SSE.
  http: 6.5,
  // Background runs drive the same engine as a request does, beside http/: they import nothing from it.
  background: 6,
  // The chat-ui profile is the chat wire for chat UIs: built on the chat dialect, below http.
  "dialects/chat-ui": 5.5,
  "dialects/chat": 5,
  "dialects/responses": 5,
  // MCP tool schemas, results and elicitations: the run's output as MCP sees it.
  "dialects/mcp": 5,
  // A2A cards, task snapshots and task events: the run's output as A2A sees it.
  "dialects/a2a": 5,
  // useChat's request and the UI message stream: built on the chat dialect (its request is a chat request).
  "dialects/ai-sdk": 5.5,
  // AG-UI's RunAgentInput and events: built on the chat dialect too.
  "dialects/ag-ui": 5.5,
  "dialects/anthropic": 5.5,
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
  return parts[0] === "dialects" || parts[0] === "surfaces" ? `${parts[0]}/${parts[1]}` : parts[0];
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
        const frameworkFree = FLOORS[from]! <= FLOORS.runs! || from === "background";
        if (frameworkFree && FRAMEWORKS.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
          problems.push(`${path.relative(SRC, file)} imports ${specifier}: only http/, the CLI and the server assembly may`);
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

/** The relative imports of every file under a folder of src/, as the folders they reach. */
function importsOf(folder: string): { file: string; to: string }[] {
  return files(path.join(SRC, folder)).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/gu)].map((match) => ({
      file: path.relative(SRC, file),
      to: path.relative(SRC, path.resolve(path.dirname(file), match[1]!)),
    })),
  );
}

test("the shared server is blind to which surfaces it serves: nothing under http/ imports a surface's folder", () => {
  assert.deepEqual(
    importsOf("http").filter(({ to }) => to.startsWith(`surfaces${path.sep}`)),
    [],
  );
});

test("background runs drive the engine beside http/: nothing under background/ imports http/ or fastify", () => {
  assert.deepEqual(
    importsOf("background").filter(({ to }) => to.startsWith(`http${path.sep}`)),
    [],
  );
  for (const file of files(path.join(SRC, "background"))) assert.doesNotMatch(readFileSync(file, "utf8"), /from "fastify"/u, file);
});
