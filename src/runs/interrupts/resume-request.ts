import { InvalidResumeError } from "../../errors/catalogue.js";
import type { ChatMessage, ToolMessage } from "../../wire/request.js";
import { isRunId } from "./checkpoint-key.js";
import { INTERRUPT_TOOL_NAME, type InterruptArguments } from "./interrupt-codec.js";

/** One answer of a resume: the tool call it answers and the value handed to `interrupt()`. */
export interface ResumeAnswer {
  toolCallId: string;
  value: unknown;
}

/** A well-formed resume: which run, which batch, and every answer. */
export interface ResumeRequest {
  runId: string;
  stateToken: string;
  answers: ResumeAnswer[];
}

function contentText(content: ToolMessage["content"]): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("");
}

/** `{"resume": <any JSON>}` gives its value; any other content is the answer as a string. */
export function answerValue(content: ToolMessage["content"]): unknown {
  const text = contentText(content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "resume" in parsed) {
      return (parsed as { resume: unknown }).resume;
    }
  } catch {
    // Not JSON: the text is the answer.
  }
  return text;
}

function parseArguments(raw: string, callId: string): InterruptArguments {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidResumeError(`The arguments of graph_interrupt call ${callId} are not JSON; send them back unchanged.`);
  }
  const args = parsed as Partial<InterruptArguments> | null;
  if (typeof args !== "object" || args === null || !isRunId(args.run_id) || typeof args.state_token !== "string") {
    throw new InvalidResumeError(`The arguments of graph_interrupt call ${callId} lack run_id or state_token; send them back unchanged.`);
  }
  return args as InterruptArguments;
}

/**
 * Recognises a resume: the trailing messages are an assistant message whose tool calls are
 * all `graph_interrupt`, then one tool message per call. Returns undefined when the trailing
 * tool messages answer ordinary tool calls (they are graph input then); throws
 * InvalidResumeError for a partial, mixed, duplicated or mismatched batch.
 */
export function readResume(messages: readonly ChatMessage[], suppliedRunId: string | undefined): ResumeRequest | undefined {
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === "tool") start -= 1;
  const toolMessages = messages.slice(start) as ToolMessage[];
  const assistant = messages[start - 1];
  if (toolMessages.length === 0 || assistant?.role !== "assistant" || !assistant.tool_calls?.length) return undefined;
  const calls = assistant.tool_calls;
  const interruptCalls = calls.filter((call) => call.function.name === INTERRUPT_TOOL_NAME);
  if (interruptCalls.length === 0) return undefined;
  if (interruptCalls.length !== calls.length) {
    throw new InvalidResumeError("The assistant message mixes graph_interrupt calls with other tool calls; answer them separately.");
  }

  const callIds = new Set(calls.map((call) => call.id));
  const answered = new Map<string, ToolMessage>();
  for (const message of toolMessages) {
    if (!callIds.has(message.tool_call_id)) {
      throw new InvalidResumeError(
        `A tool message answers '${message.tool_call_id}', which is not a call of the preceding assistant message.`,
      );
    }
    if (answered.has(message.tool_call_id)) {
      throw new InvalidResumeError(`The graph_interrupt call '${message.tool_call_id}' is answered more than once.`);
    }
    answered.set(message.tool_call_id, message);
  }
  const missing = calls.filter((call) => !answered.has(call.id)).map((call) => call.id);
  if (missing.length > 0) {
    throw new InvalidResumeError(`Answer every graph_interrupt call of the batch; missing: ${missing.join(", ")}.`);
  }

  const parsed = calls.map((call) => parseArguments(call.function.arguments, call.id));
  const runIds = new Set(parsed.map((args) => args.run_id.toLowerCase()));
  const tokens = new Set(parsed.map((args) => args.state_token));
  if (runIds.size !== 1 || tokens.size !== 1) {
    throw new InvalidResumeError("The graph_interrupt calls of one resume must come from one batch of one run.");
  }
  const [runId] = runIds as unknown as [string];
  if (suppliedRunId !== undefined && suppliedRunId.toLowerCase() !== runId) {
    throw new InvalidResumeError("metadata.graph_run_id does not match the run the graph_interrupt calls belong to.");
  }
  return {
    runId,
    stateToken: [...tokens][0]!,
    answers: calls.map((call) => ({ toolCallId: call.id, value: answerValue(answered.get(call.id)!.content) })),
  };
}
