import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

// A surface carries its own switch (its `SurfaceSwitch`, in its folder): adding one touches its
// folder, the list of surfaces and the config schema, nothing else. Counted here: for every
// surface with a switch, the files of the shared layers (the app, the CLI, the shared server,
// the server setup, the config) that name it, by importing its folder or by using its switch
// key in code (comments and strings aside). Two at most: app/surfaces.ts and the config schema.

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const SHARED = ["app", "cli", "http", "server", "config"];
const ALLOWED = ["app/surfaces.ts", "config/define-config.ts"];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return full.endsWith(".ts") ? [full] : [];
  });
}

/** The code of a file without its comments and with every string literal emptied. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//gu, "")
    .replace(/(^|[^:"'`\\])\/\/.*$/gmu, "$1")
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/gu, '""');
}

/** Each surface folder's switch key, read from its `*-surface.ts`. */
function switches(): { folder: string; key: string }[] {
  return readdirSync(path.join(SRC, "surfaces")).flatMap((folder) => {
    const file = path.join(SRC, "surfaces", folder, `${folder}-surface.ts`);
    const key = /SurfaceSwitch<"([A-Za-z0-9]+)"/u.exec(readFileSync(file, "utf8"))?.[1];
    return key === undefined ? [] : [{ folder, key }];
  });
}

test("every surface but the API's own (chat, Responses, models) declares a switch in its folder", () => {
  assert.deepEqual(
    switches()
      .map(({ folder }) => folder)
      .sort(),
    ["a2a", "ag-ui", "ai-sdk", "anthropic", "docs", "langgraph", "mcp", "playground"],
  );
});

test("no shared file but the list and the config schema names a surface", () => {
  const files = SHARED.flatMap((layer) => tsFiles(path.join(SRC, layer)));
  for (const { folder, key } of switches()) {
    const naming = files.filter((file) => {
      const text = readFileSync(file, "utf8");
      if (new RegExp(`from "[./]*/surfaces/${folder}/`, "u").test(text)) return true;
      return new RegExp(`\\.${key}\\b|\\b${key}\\??\\s*:|[{,]\\s*${key}\\s*[,}]`, "u").test(code(text));
    });
    const named = naming.map((file) => path.relative(SRC, file)).sort();
    assert.ok(named.length <= 2, `${key} is named in ${named.join(", ")}`);
    assert.deepEqual(
      named.filter((file) => !ALLOWED.includes(file)),
      [],
      `${key} is named outside the list and the config schema`,
    );
  }
});
