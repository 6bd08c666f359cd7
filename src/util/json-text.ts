/**
 * A value already written as JSON. The SSE writer sends its text as it is: a stream whose
 * frames differ only in a string or two (a chat completion's content deltas, a response's text
 * deltas) serializes the rest once, not once per token. In a typed stream (the Responses API's)
 * the frame is named by `type`, as an object frame is by its own `type`.
 */
export class JsonText {
  constructor(
    readonly json: string,
    readonly type?: string,
  ) {}
}

/**
 * The JSON text of a value around `count` open places, so that the value's JSON for any
 * `values` is `parts[0] + JSON.stringify(values[0]) + parts[1] + … + parts[count]`.
 * `make(...slots)` must return the value with each slot (a string) in its place, each once
 * and in that order; a number goes in a slot too (its JSON replaces the slot's quotes).
 * Undefined when the value's JSON does not hold the slots that way.
 */
export function jsonParts(count: number, make: (...slots: string[]) => unknown): string[] | undefined {
  const slots = Array.from({ length: count }, (_, index) => `__chat_serve_slot_${index}__`);
  let rest = JSON.stringify(make(...slots));
  const parts: string[] = [];
  for (const slot of slots) {
    const pieces = rest.split(JSON.stringify(slot));
    if (pieces.length !== 2) return undefined;
    parts.push(pieces[0]!);
    rest = pieces[1]!;
  }
  parts.push(rest);
  return parts;
}

/**
 * `parts` (from `jsonParts`) with some slots filled: `values[i]`'s JSON goes in slot `i`, and a
 * slot whose value is undefined stays open. Returns the parts around the slots left open, so a
 * stream fills what it knows once and a token only the rest.
 */
export function fillSlots(parts: readonly string[], values: readonly unknown[]): string[] {
  const filled = [parts[0]!];
  for (let slot = 0; slot < parts.length - 1; slot += 1) {
    const value = values[slot];
    if (value === undefined) filled.push(parts[slot + 1]!);
    else filled[filled.length - 1] += JSON.stringify(value) + parts[slot + 1]!;
  }
  return filled;
}
