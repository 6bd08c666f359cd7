import type { RunStreamEvent } from "../../runs/stream-run.js";
import { JsonText, jsonParts } from "../../util/json-text.js";
import type { ResponseStreamEvent } from "../../wire/responses-response.js";
import { type ResponseRenderer, streamEvent, textDeltaFields } from "./response-renderer.js";

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
  let itemId: string | undefined;
  let middle = "";
  return (event) => {
    if (event.kind !== "text") return renderer.render(event);
    const appended = renderer.appendText(event.text);
    if (appended === undefined) return renderer.render(event);
    if (appended.itemId !== itemId) {
      itemId = appended.itemId;
      middle = `${parts[1]}${JSON.stringify(itemId)}${parts[2]}${JSON.stringify(appended.index)}${parts[3]}`;
    }
    return [new JsonText(`${parts[0]}${JSON.stringify(appended.sequence)}${middle}${JSON.stringify(event.text)}${parts[4]}`, TEXT_DELTA)];
  };
}
