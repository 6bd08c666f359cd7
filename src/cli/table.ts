import { createRequire } from "node:module";
import type CliTable from "cli-table3";

/**
 * cli-table3, loaded with `require`: node's ESM loader would run its lexer over the package's
 * CommonJS modules to find their named exports, which costs a start more than the table itself
 * (see "Start-up" in docs/development.md).
 */
export const Table = createRequire(import.meta.url)("cli-table3") as typeof CliTable;
