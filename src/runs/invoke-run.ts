import type { AssistantOutput } from "./messages/message-out.js";
import type { Usage } from "../wire/response.js";
import { finalOutput } from "./output-message.js";
import type { PreparedRun } from "./prepare-run.js";
import { streamGraph, type StreamEnd } from "./stream-run.js";
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
    // Run as a stream so a paused run answers with the same text a streaming client saw
    // before the batch (what the streamable nodes said), beside the graph_interrupt calls.
    let end: StreamEnd | undefined;
    for await (const event of streamGraph(run, interrupt.input)) if (event.kind === "end") end = event;
    const batch = await settleInterruptRun(interrupt, run.graph, run.model);
    settled = true;
    if (batch !== undefined) return { output: { ...batch, text: end!.streamedText }, usage: run.usage.usage() };
    return { output: await finalOutput(run.model, run.config, end!.state), usage: run.usage.usage() };
  } catch (error) {
    throw runFailure(interrupt, error);
  } finally {
    if (!settled) await abandonInterruptRun(interrupt, run.graph);
  }
}
