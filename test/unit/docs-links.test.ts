import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = ["README.md", ...readdirSync(path.join(ROOT, "docs")).map((name) => `docs/${name}`)];

/** The lines of a page outside its code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (line.startsWith("```")) fenced = !fenced;
    return !fenced && !line.startsWith("```");
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replaceAll(" ", "-");
}

function anchors(page: string): Set<string> {
  const text = readFileSync(path.join(ROOT, page), "utf8");
  return new Set(prose(text).flatMap((line) => (/^#{1,6} (.*)$/u.exec(line)?.[1] ? [anchorOf(/^#{1,6} (.*)$/u.exec(line)![1]!)] : [])));
}

test("every link of the README and the docs pages reaches a file, and a heading there", () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const line of prose(readFileSync(path.join(ROOT, page), "utf8"))) {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/gu)) {
        if (target === undefined || /^[a-z]+:/u.test(target)) continue;
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const resolved = file === "" ? page : path.normalize(path.join(path.dirname(page), file));
        if (!existsSync(path.join(ROOT, resolved))) {
          broken.push(`${page}: ${target} (no file ${resolved})`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
          broken.push(`${page}: ${target} (no heading '${anchor}' in ${resolved})`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});

test("every docs page is linked from the README", () => {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const unlinked = PAGES.filter((page) => page !== "README.md" && !readme.includes(`](${page}`));
  assert.deepEqual(unlinked, []);
});
