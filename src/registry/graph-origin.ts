/** Where a module reference's export was read from: the file and the export's name. */
export interface GraphOrigin {
  /** The module's absolute path. */
  sourceFile: string;
  exportSymbol: string;
}

const SOURCES = new WeakMap<object, GraphOrigin>();

/** Remembers the file and export a loaded value came from (a graph, a factory), for what reads its types. */
export function rememberGraphOrigin(value: unknown, source: GraphOrigin): void {
  if ((typeof value === "object" && value !== null) || typeof value === "function") SOURCES.set(value, source);
}

/** The file and export a config's graph was loaded from, when it came from a module reference. */
export function graphOriginOf(value: unknown): GraphOrigin | undefined {
  return (typeof value === "object" && value !== null) || typeof value === "function" ? SOURCES.get(value) : undefined;
}
