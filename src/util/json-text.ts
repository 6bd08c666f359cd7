/**
 * A value already written as JSON. The SSE writer sends its text as it is: a stream whose
 * frames differ only in one string (a chat completion's content deltas) serializes the rest
 * once, not once per token. For untyped streams only: a typed stream names each frame by
 * its object's `type`.
 */
export class JsonText {
  constructor(readonly json: string) {}
}

const SLOT = "__chat_serve_slot__";

/**
 * A template of `value` with one string left open: `make(sample)` must return the value with
 * `sample` in that place. Returns the function that writes the value for any string, or
 * undefined when the value's JSON does not hold the sample exactly once.
 */
export function jsonTemplate(make: (slot: string) => unknown): ((text: string) => JsonText) | undefined {
  const parts = JSON.stringify(make(SLOT)).split(JSON.stringify(SLOT));
  if (parts.length !== 2) return undefined;
  const [head, tail] = parts as [string, string];
  return (text) => new JsonText(head + JSON.stringify(text) + tail);
}
