/**
 * Edit distance between two short strings: insertions, deletions, substitutions, and two
 * neighbouring letters swapped (the commonest typo) counted as one edit.
 */
function distance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, index) => index)];
  for (let row = 1; row <= a.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= b.length; column += 1) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      let best = Math.min(rows[row - 1]![column]! + 1, current[column - 1]! + 1, rows[row - 1]![column - 1]! + cost);
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) {
        best = Math.min(best, rows[row - 2]![column - 2]! + 1);
      }
      current.push(best);
    }
    rows.push(current);
  }
  return rows[a.length]![b.length]!;
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
