/** Where a module reference's export was read from: the file and the export's name. */
export interface GraphSource {
  /** The module's absolute path. */
  sourceFile: string;
  exportSymbol: string;
}

const SOURCES = new WeakMap<object, GraphSource>();

/** Remembers the file and export a loaded value came from (a graph, a factory), for what reads its types. */
export function rememberGraphSource(value: unknown, source: GraphSource): void {
  if ((typeof value === "object" && value !== null) || typeof value === "function") SOURCES.set(value, source);
}

/** The file and export a config's graph was loaded from, when it came from a module reference. */
export function graphSourceOf(value: unknown): GraphSource | undefined {
  return (typeof value === "object" && value !== null) || typeof value === "function" ? SOURCES.get(value) : undefined;
}
