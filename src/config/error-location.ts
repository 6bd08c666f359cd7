import { readFileSync } from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";

/**
 * Where in the user's code an import failed, as `file:line:column` (relative to `baseDir`,
 * columns counted from 1 as editors do): for a syntax error, the place the TypeScript loader
 * names in its message (it counts columns from 0); for an error thrown while the module ran,
 * the first frame of its stack outside node_modules and Node's own code (its line only on
 * line 1, where the loader's wrapper shifts the column). Undefined when neither says.
 */
export function errorLocation(error: unknown, baseDir: string): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const place = (file: string, line: string, column?: number) =>
    `${path.relative(baseDir, file) || file}:${line}${column === undefined ? "" : `:${column}`}`;
  const message = stripVTControlCharacters(error.message);
  const missing = missingModuleLocation(error, message);
  if (missing !== undefined) return place(missing.file, missing.line);
  const parse = /(\/[^\s:]+|[A-Za-z]:\\[^\s:]+):(\d+):(\d+)\s*$/mu.exec(message);
  if (parse?.[1] !== undefined && parse[2] !== undefined) return place(parse[1], parse[2], Number(parse[3]) + 1);
  for (const line of String(error.stack ?? "")
    .split("\n")
    .slice(1)) {
    // A frame's path follows its "(" or its "at ": node's own (`node:internal/…`) never passes for a file.
    const frame = /(?:\(|^at )((?:\/|[A-Za-z]:\\|file:\/\/)[^()\s]+?):(\d+):(\d+)\)?\s*$/u.exec(line.trim());
    if (frame?.[1] === undefined || frame[2] === undefined) continue;
    const file = frame[1].startsWith("file://") ? new URL(frame[1]).pathname : frame[1];
    if (/[/\\]node_modules[/\\]/u.test(file) || file.startsWith("node:")) continue;
    // The loader runs a module inside a wrapper that begins on its first line, so a column
    // there is the wrapper's, not the file's: line 1 is named without one.
    return frame[2] === "1" ? place(file, frame[2]) : place(file, frame[2], Number(frame[3]));
  }
  return undefined;
}

/**
 * For a module that is not there (`Cannot find module 'x'`): the project file that imports it
 * (the first of the loader's `requireStack` outside node_modules) and the line of its import,
 * found by the name in quotes; undefined when the loader does not say who imported it.
 */
function missingModuleLocation(error: Error, message: string): { file: string; line: string } | undefined {
  const code = (error as { code?: unknown }).code;
  if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") return undefined;
  const stack = (error as { requireStack?: unknown }).requireStack;
  const importer = Array.isArray(stack)
    ? stack.find((file): file is string => typeof file === "string" && !/[/\\]node_modules[/\\]/u.test(file))
    : undefined;
  if (importer === undefined) return undefined;
  const name = /Cannot find (?:module|package) '([^']+)'/u.exec(message)?.[1];
  let line = "1";
  if (name !== undefined) {
    try {
      const index = readFileSync(importer, "utf8")
        .split("\n")
        .findIndex((text) => text.includes(`"${name}"`) || text.includes(`'${name}'`));
      if (index !== -1) line = String(index + 1);
    } catch {
      // Not readable: its first line.
    }
  }
  return { file: importer, line };
}

/** The error's message without the location the loader appended (it is given apart). */
export function messageWithoutLocation(error: unknown): string {
  const message = stripVTControlCharacters(error instanceof Error ? error.message : String(error));
  const first = message.split("\n").find((line) => line.trim() !== "") ?? message;
  return first.trim();
}
