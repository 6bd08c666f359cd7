/** Edit distance (insertions, deletions, substitutions) between two short strings. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let row = 1; row <= a.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= b.length; column += 1) {
      const substitution = previous[column - 1]! + (a[row - 1] === b[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * `; did you mean 'x'?` for the candidate closest to a mistyped name, when one is close
 * enough to be a likely typo (a third of its length, at least one edit); otherwise "".
 */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  let best: { candidate: string; edits: number } | undefined;
  for (const candidate of candidates) {
    const edits = distance(name.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || edits < best.edits) best = { candidate, edits };
  }
  if (best === undefined || best.edits > Math.max(1, Math.floor(name.length / 3))) return "";
  return `; did you mean '${best.candidate}'?`;
}
