import type { ClientEventWire } from "../wire/response.js";

/** The key that marks a custom stream part as a chat-serve client event, and its version. */
export const ENVELOPE_KEY = "graph_chat_serve_event";
export const ENVELOPE_VERSION = "v1";

/** The client event types of vocabulary v1. */
export const CLIENT_EVENT_TYPES = ["status", "progress", "artifact"] as const;
export type ClientEventType = (typeof CLIENT_EVENT_TYPES)[number];

/** Largest serialized event the server forwards; larger artifacts go by ID or URL. */
export const MAX_EVENT_BYTES = 16 * 1024;

/** What `statusEvent` and `clientEvent` write to LangGraph's custom stream. */
export interface ClientEventEnvelope extends ClientEventWire {
  [ENVELOPE_KEY]: typeof ENVELOPE_VERSION;
}

export function isEnvelope(part: unknown): part is Record<string, unknown> {
  return typeof part === "object" && part !== null && ENVELOPE_KEY in part;
}
