import type { AssistantOutput } from "../translate/message-out.js";
import type { Usage } from "../wire/response.js";
import { finalOutput } from "./output-message.js";
import type { PreparedRun } from "./prepare-run.js";
import { abandonInterruptRun, batchOutput, runFailure, settleInterruptRun } from "./interrupts/interrupt-run.js";

export interface RunResult {
  output: AssistantOutput;
  usage: Usage | undefined;
}

/** Runs the graph to completion (or to its next interrupt batch) and returns the assistant turn. */
export async function invokeRun(run: PreparedRun): Promise<RunResult> {
  const { interrupt } = run;
  if (interrupt === undefined) {
    const state = await run.graph.invoke(run.input, run.runConfig);
    return { output: await finalOutput(run.model, run.config, state), usage: run.usage.usage() };
  }
  // Repeating the initial request of a pending run returns its batch without running the graph.
  if (interrupt.kind === "replay") return { output: batchOutput(interrupt.runId, interrupt.batch), usage: undefined };
  let settled = false;
  try {
    const state = await run.graph.invoke(interrupt.input, run.runConfig);
    const batch = await settleInterruptRun(interrupt, run.graph, run.model, run.pendingRuns);
    settled = true;
    return { output: batch ?? (await finalOutput(run.model, run.config, state)), usage: run.usage.usage() };
  } catch (error) {
    throw runFailure(interrupt, error);
  } finally {
    if (!settled) await abandonInterruptRun(interrupt, run.graph, run.pendingRuns);
  }
}
