import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPathsMatcher, getTsconfig } from "get-tsconfig";
import type { createJiti as CreateJiti, Jiti } from "jiti";

// jiti by `require`, not `import`: node's ESM loader reads a CommonJS module it imports with a
// lexer for its named exports, and jiti's entry is a 190 KB bundle. Lexing it, and the optimised
// code V8 then makes of the lexer, cost about 4% of a start's CPU (the start-up bench's
// baseline loads jiti the same way).
const { createJiti } = createRequire(import.meta.url)("jiti") as { createJiti: typeof CreateJiti };

/** What the probe stands for in a `paths` pattern's `*`, to read where the pattern points. */
const PROBE = "__chat_serve_probe__";

/**
 * The project's tsconfig `paths` (with its `baseUrl` and `extends`, as TypeScript, tsx and so
 * `langgraphjs dev` read them) as jiti's aliases: `"@/*": ["./src/*"]` becomes `@/` for
 * `<project>/src/`. The first target of each pattern is taken; none without a tsconfig.
 */
export function tsconfigAliases(dir: string): Record<string, string> {
  const tsconfig = getTsconfig(dir);
  const paths = tsconfig?.config.compilerOptions?.paths;
  const matcher = tsconfig === null ? null : createPathsMatcher(tsconfig);
  if (paths === undefined || matcher === null) return {};
  const aliases: Record<string, string> = {};
  for (const pattern of Object.keys(paths)) {
    const star = pattern.indexOf("*");
    if (star !== -1 && star !== pattern.length - 1) continue; // `a/*/b`: not a prefix jiti can alias
    const [target] = matcher(star === -1 ? pattern : `${pattern.slice(0, -1)}${PROBE}`);
    if (target === undefined) continue;
    if (star === -1) aliases[pattern] = target;
    else if (target.endsWith(PROBE)) aliases[pattern.slice(0, -1)] = target.slice(0, -PROBE.length);
  }
  return aliases;
}

/**
 * Loads TypeScript and JavaScript modules of the user's project (the config file and the
 * graph modules it names) through one jiti instance, so they share one module cache and
 * work whether the user's project is ESM or CommonJS. Imports through the project's tsconfig
 * `paths` resolve as they do under `langgraphjs dev`.
 */
export class ModuleLoader {
  readonly #jiti: Jiti;

  constructor(base: string) {
    // The transpiled files are cached on disk (jiti's cache folder: node_modules/.cache/jiti,
    // or the OS temp dir), keyed by each file's content, so a second start skips the transpile
    // and an edit is never served stale.
    const alias = tsconfigAliases(path.dirname(fileURLToPath(base)));
    this.#jiti = createJiti(base, {
      interopDefault: false,
      moduleCache: true,
      fsCache: true,
      ...(Object.keys(alias).length === 0 ? {} : { alias }),
    });
  }

  async load(filepath: string): Promise<Record<string, unknown>> {
    return (await this.#jiti.import(filepath)) as Record<string, unknown>;
  }
}
