import { createJiti, type Jiti } from "jiti";

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
