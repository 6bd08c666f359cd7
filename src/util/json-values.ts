/**
 * Why a value is not plain JSON data (finite numbers; no functions, cycles, BigInt, class
 * instances or undefined values), or null. Object properties set to undefined count as absent.
 */
export function jsonProblem(value: unknown, path = "", seen = new Set<object>()): string | null {
  const at = path === "" ? "the value" : path;
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : `${at} is ${value}, which JSON cannot represent`;
    case "bigint":
      return `${at} is a BigInt, which JSON cannot represent`;
    case "undefined":
      return `${at} is undefined, which JSON cannot represent`;
    case "function":
    case "symbol":
      return `${at} is a ${typeof value}, which JSON cannot represent`;
    default:
      break;
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) return `${at} refers to itself (a cycle)`;
  if (Array.isArray(object)) {
    seen.add(object);
    for (const [index, item] of object.entries()) {
      const problem = jsonProblem(item, path === "" ? String(index) : `${path}.${index}`, seen);
      if (problem !== null) return problem;
    }
    seen.delete(object);
    return null;
  }
  const prototype = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype && prototype !== null) {
    return `${at} is a ${object.constructor?.name ?? "class instance"}, not a plain JSON object`;
  }
  seen.add(object);
  for (const [key, item] of Object.entries(object)) {
    // An absent optional field: JSON leaves the key out, nothing is changed.
    if (item === undefined) continue;
    const problem = jsonProblem(item, path === "" ? key : `${path}.${key}`, seen);
    if (problem !== null) return problem;
  }
  seen.delete(object);
  return null;
}

/** Freezes a JSON value and everything inside it. */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
