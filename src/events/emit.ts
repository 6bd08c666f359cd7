import { getWriter } from "@langchain/langgraph";
import { type ClientEventEnvelope, type ClientEventType, ENVELOPE_KEY, ENVELOPE_VERSION } from "./envelope.js";

/** Status data (spec 2.9): graph-authored text, `done` ends a visible sequence, `hidden` removes it. */
export interface StatusData {
  description: string;
  done?: boolean;
  hidden?: boolean;
}

/** The documented progress shape; any JSON-safe object is accepted. */
export interface ProgressData {
  stage?: string;
  completed?: number;
  total?: number;
  message?: string;
  [key: string]: unknown;
}

function currentWriter(): ((chunk: unknown) => void) | undefined {
  try {
    return getWriter();
  } catch {
    // Outside a graph run there is no config and so no custom stream.
    return undefined;
  }
}

function write(envelope: ClientEventEnvelope): ClientEventEnvelope {
  currentWriter()?.(envelope);
  return envelope;
}

/**
 * Publishes a client event from a node or tool to LangGraph's custom stream. Clients that
 * opted in (`metadata.graph_stream_events: "v1"`) receive it as a chunk; direct
 * `graph.stream(..., { streamMode: "custom" })` consumers see the envelope itself.
 *
 * @example
 * ```ts
 * clientEvent("progress", { stage: "search", completed: 2, total: 5 }, ["research"]);
 * clientEvent("artifact", { id: "report-42", url: "https://example.com/r/42" });
 * ```
 */
export function clientEvent(type: ClientEventType, data: Record<string, unknown>, namespace: string[] = []): ClientEventEnvelope {
  return write({ [ENVELOPE_KEY]: ENVELOPE_VERSION, type, namespace, data });
}

/**
 * Publishes a status update. A visible sequence ends with `done: true`; `hidden: true` on
 * the last update tells clients to remove the status.
 *
 * @example
 * ```ts
 * statusEvent("Searching the archive", { namespace: ["research"] });
 * statusEvent("Search finished", { done: true, namespace: ["research"] });
 * ```
 */
export function statusEvent(
  description: string,
  options: { done?: boolean; hidden?: boolean; namespace?: string[] } = {},
): ClientEventEnvelope {
  const data: StatusData = { description, done: options.done ?? false, hidden: options.hidden ?? false };
  return clientEvent("status", { ...data }, options.namespace ?? []);
}
