import { createRequire } from "node:module";
import type { createJiti as CreateJiti, Jiti } from "jiti";

// jiti by `require`, not `import`: node's ESM loader reads a CommonJS module it imports with a
// lexer for its named exports, and jiti's entry is a 190 KB bundle. Lexing it, and the optimised
// code V8 then makes of the lexer, cost about 4% of a start's CPU (the start-up bench's
// baseline loads jiti the same way).
const { createJiti } = createRequire(import.meta.url)("jiti") as { createJiti: typeof CreateJiti };

/**
 * Loads TypeScript and JavaScript modules of the user's project (the config file and the
 * graph modules it names) through one jiti instance, so they share one module cache and
 * work whether the user's project is ESM or CommonJS.
 */
export class ModuleLoader {
  readonly #jiti: Jiti;

  constructor(base: string) {
    // The transpiled files are cached on disk (jiti's cache folder: node_modules/.cache/jiti,
    // or the OS temp dir), keyed by each file's content, so a second start skips the transpile
    // and an edit is never served stale.
    this.#jiti = createJiti(base, { interopDefault: false, moduleCache: true, fsCache: true });
  }

  async load(filepath: string): Promise<Record<string, unknown>> {
    return (await this.#jiti.import(filepath)) as Record<string, unknown>;
  }
}
