import { randomHex } from "../../util/random-hex.js";

// A response that pauses an interrupt run carries the run ID in its own ID, so a later
// request can name it in `previous_response_id` without the server storing anything. The run
// ID alone finds nothing: the checkpoint key also holds the caller's scope and the model.
const PAUSED = /^resp_([0-9a-f]{32})[0-9a-f]{16}$/u;

function uuidOfHex(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A fresh response ID; for a response of an interrupt run, one that names the run. */
export function responseId(runId?: string): string {
  // Other responses get a shorter ID, so it is never read as a run's.
  return runId === undefined ? `resp_${randomHex(40)}` : `resp_${runId.replaceAll("-", "").toLowerCase()}${randomHex(16)}`;
}

/** The run ID a response ID names, or undefined for an ID this server did not make for a run. */
export function runIdOfResponseId(id: string): string | undefined {
  const match = PAUSED.exec(id);
  return match?.[1] === undefined ? undefined : uuidOfHex(match[1]);
}
