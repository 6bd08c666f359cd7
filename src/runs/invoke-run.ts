import type { AssistantOutput } from "../translate/message-out.js";
import type { Usage } from "../wire/response.js";
import { finalOutput } from "./output-message.js";
import type { PreparedRun } from "./prepare-run.js";

export interface RunResult {
  output: AssistantOutput;
  usage: Usage | undefined;
}

/** Runs the graph to completion and returns the assistant turn with the run's usage. */
export async function invokeRun(run: PreparedRun): Promise<RunResult> {
  const state = await run.graph.invoke(run.input, run.runConfig);
  return { output: await finalOutput(run.model, run.config, state), usage: run.usage.usage() };
}
