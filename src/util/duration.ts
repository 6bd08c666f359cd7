const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90m`, `12h`, `7d` (also `s` and `ms`) in milliseconds; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h|d)$/u.exec(text.trim());
  return match === null ? undefined : Number(match[1]) * UNITS[match[2]!]!;
}
