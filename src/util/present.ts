/** The entries whose value was given (neither undefined nor null), for an object of optional fields. */
export function present<T extends object>(entries: { [K in keyof T]: T[K] | null | undefined }): T {
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined && value !== null)) as T;
}
