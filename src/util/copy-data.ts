/**
 * A deep copy of plain data: objects, arrays and dates, down to their primitives. What the
 * stores and the Responses renderer keep is JSON with the odd `Date`, and copying it by
 * walking it costs a fraction of `structuredClone`, which serialises and deserialises. Any
 * other object (a Map, a class instance) is left to `structuredClone`, as before.
 */
export function copyData<T>(value: T): T {
  return copyValue(value) as T;
}

function copyValue(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyValue);
  if (value instanceof Date) return new Date(value.getTime());
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyValue((value as Record<string, unknown>)[key]);
  return copy;
}
