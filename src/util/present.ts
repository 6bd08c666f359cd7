/** The entries whose value was given (neither undefined nor null), for an object of optional fields. */
export function present<T extends object>(entries: { [K in keyof T]: T[K] | null | undefined }): T {
  // A loop, not entries-filter-fromEntries: every chat request's parameters pass through here.
  const given: Record<string, unknown> = {};
  for (const key in entries) {
    const value = entries[key];
    if (value !== undefined && value !== null) given[key] = value;
  }
  return given as T;
}
