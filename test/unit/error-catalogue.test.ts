import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const read = (relative: string) => readFileSync(fileURLToPath(new URL(relative, import.meta.url)), "utf8");

/** Every code a class of the catalogue can carry, read from its source. */
function catalogueCodes(): Set<string> {
  const source = read("../../src/errors/catalogue.ts");
  const codes = new Set<string>();
  for (const [, code] of source.matchAll(/readonly code = "([a-z_]+)"/gu)) codes.add(code!);
  for (const line of source.split("\n").filter((text) => /this\.code =/u.test(text))) {
    for (const [, code] of line.matchAll(/"([a-z_]+)"/gu)) codes.add(code!);
  }
  return codes;
}

/** The codes of the docs' error table (docs/http-api.md, section "Errors"), from its `code` column. */
function readmeCodes(): Set<string> {
  const readme = read("../../docs/http-api.md");
  const section = readme.slice(readme.indexOf("## Errors"), readme.indexOf("\n## ", readme.indexOf("## Errors") + 1));
  const rows = section.split("\n").filter((line) => line.startsWith("|") && !line.startsWith("|---"));
  const header = rows[0]!.split("|").map((cell) => cell.trim());
  const column = header.indexOf("code");
  assert.ok(column > 0, "the table has a code column");
  return new Set(rows.slice(1).map((row) => /`([a-z_]+)`/u.exec(row.split("|")[column] ?? "")?.[1] ?? `(no code in: ${row})`));
}

test("the docs' error table and the error catalogue name the same codes", () => {
  assert.deepEqual([...readmeCodes()].sort(), [...catalogueCodes()].sort());
});
