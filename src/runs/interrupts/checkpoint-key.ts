import { createHash, randomUUID } from "node:crypto";
import { InvalidRunIdError } from "../../errors/catalogue.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;
const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** A run ID from `metadata.graph_run_id` (a non-nil UUID), or a new one. */
export function resolveRunId(supplied: string | undefined): string {
  if (supplied === undefined) return randomUUID();
  if (!UUID.test(supplied)) throw new InvalidRunIdError(`metadata.graph_run_id must be a UUID (got ${JSON.stringify(supplied)}).`);
  if (supplied === NIL_UUID) throw new InvalidRunIdError("metadata.graph_run_id must not be the nil UUID.");
  return supplied.toLowerCase();
}

export function isRunId(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value) && value !== NIL_UUID;
}

/**
 * The internal checkpoint key of one interrupt run: hex SHA-256 of
 * `["chat-serve.interrupt.v1", scope, model, runId]`. Not a chat or thread ID of any UI.
 */
export function checkpointKey(scope: string, model: string, runId: string): string {
  return createHash("sha256")
    .update(JSON.stringify(["chat-serve.interrupt.v1", scope, model, runId]))
    .digest("hex");
}
