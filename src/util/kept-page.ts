// A page of a filtered listing whose source pages by offset: the rows the filter drops must not
// shift the page, so the source is read from its start.

/**
 * The page `[offset, offset + limit)` of what `fetch` lists and `keep` keeps: read from the
 * start in pages of `offset + limit`, so that rows dropped by `keep` never shift the page.
 * When nothing is dropped, this is one read of the source.
 */
export async function keptPage<T>(
  fetch: (offset: number, limit: number) => Promise<T[]>,
  keep: (value: T) => boolean | Promise<boolean>,
  offset: number,
  limit: number,
): Promise<T[]> {
  const wanted = offset + limit;
  const pageSize = Math.max(wanted, 10);
  const kept: T[] = [];
  for (let read = 0; kept.length < wanted; read += pageSize) {
    const page = await fetch(read, pageSize);
    for (const value of page) if (await keep(value)) kept.push(value);
    if (page.length < pageSize) break;
  }
  return kept.slice(offset, wanted);
}
