/**
 * The marker a paused run leaves in the assistant text of the `chat-ui` profile, so that the
 * conversation a chat UI sends back can resume it: `graph_interrupt:<run id>:<state token>` in
 * inline code on the message's last line. It is plain ASCII with no tags, so it survives a
 * UI that strips whitespace, splits off `<think>`-like tags, renders Markdown and re-sends its
 * history verbatim.
 */
const MARKER = /graph_interrupt:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([0-9a-f]{32})/iu;

export function resumeMarker(runId: string, stateToken: string): string {
  return `\`graph_interrupt:${runId}:${stateToken}\``;
}

/** The run and batch a message's text points at, if it carries a marker. */
export function readMarker(text: string): { runId: string; stateToken: string } | undefined {
  const match = MARKER.exec(text);
  return match === null ? undefined : { runId: match[1]!.toLowerCase(), stateToken: match[2]!.toLowerCase() };
}
