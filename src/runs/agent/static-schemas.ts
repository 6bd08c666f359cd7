import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { GraphOrigin } from "../../registry/graph-origin.js";

/** A graph's schemas as LangGraph's TypeScript reader gives them. */
export interface StaticSchemas {
  state?: unknown;
  input?: unknown;
  output?: unknown;
  config?: unknown;
}

type Reader = (spec: GraphOrigin, options: { timeoutMs: number }) => Promise<Record<string, StaticSchemas>>;

/** How long one graph's types may take to read (TypeScript builds the project's program first). */
const READ_TIMEOUT_MS = 30_000;

/** One reading per graph file and export, for the process's life: types change only with a restart. */
const READINGS = new Map<string, Promise<StaticSchemas | undefined>>();

/** LangGraph's own reader of a graph's TypeScript types, as the project resolves it (`@langchain/langgraph-cli` installs it). */
async function projectReader(from: string): Promise<Reader | undefined> {
  let resolved: string;
  try {
    resolved = createRequire(path.join(path.dirname(from), "noop.js")).resolve("@langchain/langgraph-api/schema");
  } catch {
    return undefined;
  }
  const module = (await import(pathToFileURL(resolved).href)) as { getStaticGraphSchema?: Reader };
  return typeof module.getStaticGraphSchema === "function" ? module.getStaticGraphSchema : undefined;
}

/**
 * A graph's schemas read from its TypeScript types, as `langgraphjs dev` reads them for a graph
 * whose runtime says nothing (an `Annotation.Root` state or configuration): by LangGraph's own
 * reader (`@langchain/langgraph-api/schema`, with the project's `typescript`) when the project
 * has it, else undefined. A reading that fails is undefined too, and `warn` is told once.
 */
export function staticSchemas(source: GraphOrigin, warn: (error: unknown) => void): Promise<StaticSchemas | undefined> {
  const key = `${source.sourceFile}\u0000${source.exportSymbol}`;
  let reading = READINGS.get(key);
  if (reading === undefined) {
    reading = (async () => {
      const read = await projectReader(source.sourceFile);
      if (read === undefined) return undefined;
      const found = await read(source, { timeoutMs: READ_TIMEOUT_MS });
      // The root graph's entry is its export's name; subgraphs' are `name|node`.
      const root = Object.entries(found).find(([name]) => !name.includes("|"));
      return root?.[1];
    })().catch((error: unknown) => {
      warn(error);
      return undefined;
    });
    READINGS.set(key, reading);
  }
  return reading;
}
