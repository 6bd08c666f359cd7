import type { RunStreamEvent } from "../../runs/stream-run.js";
import { fillSlots, JsonText, jsonParts } from "../../util/json-text.js";
import type { ResponseStreamEvent } from "../../wire/responses-response.js";
import { streamEvent, textDeltaFields } from "./response-parts.js";
import type { ResponseRenderer } from "./response-renderer.js";

const TEXT_DELTA = "response.output_text.delta";

/** The JSON of a text delta event around its number, item, output index and text, made once. */
const TEXT_DELTA_PARTS = jsonParts(4, (sequence, itemId, index, delta) =>
  streamEvent(TEXT_DELTA, sequence as unknown as number, textDeltaFields(itemId!, index as unknown as number, delta!)),
);

/**
 * A streamed response's events for the SSE writer: as `renderer.render` gives them, except a
 * text delta into the answer already streaming, whose JSON is written from a template made
 * once (the item's id and index go in once per item, the number and the text once per token).
 */
export function responseFrames(renderer: ResponseRenderer): (event: RunStreamEvent) => (ResponseStreamEvent | JsonText)[] {
  const parts = TEXT_DELTA_PARTS;
  if (parts === undefined) return (event) => renderer.render(event);
  // The parts around a delta's number and text, for the item the deltas go into.
  let item: { id: string; parts: string[] } | undefined;
  return (event) => {
    if (event.kind !== "text") return renderer.render(event);
    const appended = renderer.appendText(event.text);
    if (appended === undefined) return renderer.render(event);
    if (item?.id !== appended.itemId) item = { id: appended.itemId, parts: fillSlots(parts, [undefined, appended.itemId, appended.index]) };
    const [head, middle, tail] = item.parts;
    return [new JsonText(`${head}${appended.sequence}${middle}${JSON.stringify(event.text)}${tail}`, TEXT_DELTA)];
  };
}
