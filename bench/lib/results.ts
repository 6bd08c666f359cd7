// The one results table of `npm run bench`.

export interface Row {
  area: string;
  case: string;
  /** What was measured (chat-serve, unless the case says otherwise), with its unit. */
  measured: string;
  /** The baseline measured in the same run, with its unit. */
  baseline: string;
  /** The measured side against the baseline. */
  ratio: string;
  target: string;
  /** Whether the target was met in this run; a dash where there is no target. */
  met: string;
}

export const fixed = (value: number, digits = 2) => value.toFixed(digits);

/** A row whose target is a bound on the ratio: `at least` for throughput, `at most` for costs. */
export function row(
  area: string,
  name: string,
  measured: string,
  baseline: string,
  ratio: number,
  target?: { atLeast?: number; atMost?: number },
  range?: [number, number],
): Row {
  const met =
    target === undefined
      ? "–"
      : (target.atLeast === undefined || ratio >= target.atLeast) && (target.atMost === undefined || ratio <= target.atMost);
  return {
    area,
    case: name,
    measured,
    baseline,
    ratio: range === undefined ? fixed(ratio) : `${fixed(ratio)} (${fixed(range[0])}–${fixed(range[1])})`,
    target: target === undefined ? "–" : target.atLeast !== undefined ? `≥ ${target.atLeast}` : `≤ ${target.atMost}`,
    met: met === "–" ? "–" : met ? "yes" : "no",
  };
}

/** A row with no ratio to a baseline (start-up, where the baseline is not chat-serve's). */
export function plainRow(area: string, name: string, measured: string, baseline: string, ratio: string, target: string, met: string): Row {
  return { area, case: name, measured, baseline, ratio, target, met };
}

/** The table as Markdown, for bench/README.md. */
export function markdown(rows: Row[]): string {
  const columns = Object.keys(rows[0] ?? {}) as (keyof Row)[];
  const lines = [`| ${columns.join(" | ")} |`, `| ${columns.map(() => "---").join(" | ")} |`];
  for (const entry of rows) lines.push(`| ${columns.map((column) => entry[column].replaceAll("|", "\\|")).join(" | ")} |`);
  return lines.join("\n");
}
