import { createHash } from "node:crypto";
import { InvalidInterruptPayloadError } from "../../errors/catalogue.js";
import { jsonProblem } from "../../util/json-values.js";
import type { WireToolCallOut } from "../../wire/response.js";

export const INTERRUPT_TOOL_NAME = "graph_interrupt";

/** One durable interrupt awaiting an answer. */
export interface PendingInterrupt {
  id: string;
  value: unknown;
}

/** The pending interrupts of a run and the checkpoint they were read from. */
export interface InterruptBatch {
  checkpointId: string;
  interrupts: PendingInterrupt[];
}

/** What a `graph_interrupt` tool call carries in its arguments. */
export interface InterruptArguments {
  run_id: string;
  state_token: string;
  payload: unknown;
}

/**
 * Identifies one batch: a resume whose token differs answers an older (or newer) batch
 * and is refused as stale.
 */
export function stateToken(batch: InterruptBatch): string {
  const ids = batch.interrupts.map((interrupt) => interrupt.id).sort();
  return createHash("sha256")
    .update(JSON.stringify([batch.checkpointId, ids]))
    .digest("hex")
    .slice(0, 32);
}

/** The tool-call ID of an interrupt; stable, so a resume names the interrupt it answers. */
export function toolCallIdOf(interruptId: string): string {
  return `call_${interruptId}`;
}

/** The batch as `graph_interrupt` tool calls. Interrupt values that are not JSON are refused. */
export function encodeBatch(runId: string, batch: InterruptBatch): WireToolCallOut[] {
  const token = stateToken(batch);
  return batch.interrupts.map((interrupt) => {
    const problem = jsonProblem(interrupt.value, "payload");
    if (problem !== null) {
      throw new InvalidInterruptPayloadError(`The graph interrupted with a value JSON cannot carry: ${problem}.`);
    }
    const args: InterruptArguments = { run_id: runId, state_token: token, payload: interrupt.value };
    return {
      id: toolCallIdOf(interrupt.id),
      type: "function",
      function: { name: INTERRUPT_TOOL_NAME, arguments: JSON.stringify(args) },
    };
  });
}

/**
 * The `graph_interrupt` calls of an assistant turn, decoded, when every tool call of the turn
 * is one (a paused run); undefined for any other turn.
 */
export function decodeBatch(toolCalls: readonly WireToolCallOut[]): InterruptArguments[] | undefined {
  if (toolCalls.length === 0 || toolCalls.some((call) => call.function.name !== INTERRUPT_TOOL_NAME)) return undefined;
  return toolCalls.map((call) => JSON.parse(call.function.arguments) as InterruptArguments);
}
