import { z } from "zod";
import { describeFirstIssue } from "../util/describe-issue.js";
import { jsonProblem } from "../util/json-values.js";
import type { ClientEventWire } from "../wire/response.js";
import { CLIENT_EVENT_TYPES, ENVELOPE_KEY, ENVELOPE_VERSION, isEnvelope, MAX_EVENT_BYTES } from "./envelope.js";

const dataObject = z.record(z.string(), z.unknown());
const envelopeSchema = z.strictObject({
  [ENVELOPE_KEY]: z.literal(ENVELOPE_VERSION, `unsupported envelope version (this server speaks ${ENVELOPE_VERSION})`),
  type: z.enum(CLIENT_EVENT_TYPES, `type must be one of ${CLIENT_EVENT_TYPES.join(", ")}`),
  namespace: z.array(z.string("every namespace segment must be a string")),
  data: dataObject,
});
const statusData = z.strictObject({ description: z.string().min(1), done: z.boolean(), hidden: z.boolean() });

/** A custom stream part as the server sees it. */
export type CustomPart = { kind: "event"; event: ClientEventWire } | { kind: "invalid"; reason: string } | { kind: "foreign" };

/**
 * Checks one custom stream part. Envelopes that pass become wire events; invalid envelopes
 * carry the reason (logged, never sent); anything else is foreign custom data for direct
 * stream consumers only.
 */
export function readCustomPart(part: unknown): CustomPart {
  if (!isEnvelope(part)) return { kind: "foreign" };
  const parsed = envelopeSchema.safeParse(part);
  if (!parsed.success) return { kind: "invalid", reason: describeFirstIssue(parsed.error) };
  const { type, namespace, data } = parsed.data;
  const notJson = jsonProblem(data, "data");
  if (notJson !== null) return { kind: "invalid", reason: notJson };
  if (type === "status") {
    const status = statusData.safeParse(data);
    if (!status.success) return { kind: "invalid", reason: `status ${describeFirstIssue(status.error, ["data"])}` };
  }
  const event: ClientEventWire = { type, namespace: [...namespace], data: structuredClone(data) };
  const size = Buffer.byteLength(JSON.stringify(event));
  if (size > MAX_EVENT_BYTES) {
    return { kind: "invalid", reason: `the event is ${size} bytes; the limit is ${MAX_EVENT_BYTES} (send large artifacts by ID or URL)` };
  }
  return { kind: "event", event };
}
