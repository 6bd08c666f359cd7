import type { ServeError } from "../../errors/serve-error.js";
import type { InterruptArguments } from "../../runs/interrupts/interrupt-codec.js";
import { questionText, readQuestion } from "../../runs/interrupts/interrupt-question.js";
import type { AssistantOutput } from "../../runs/messages/message-out.js";
import type { Usage } from "../../wire/response.js";
import { RESUME_TOOL } from "./tool-names.js";

/** A link in a tool's result: a citation's source or an artifact the graph made. */
export interface ResourceLink {
  type: "resource_link";
  uri: string;
  name: string;
  description?: string;
}

type Content = { type: "text"; text: string } | ResourceLink;

/** A `tools/call` result. */
export interface ToolResult {
  [key: string]: unknown;
  content: Content[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

function usageOf(usage: Usage | undefined) {
  if (usage === undefined) return null;
  return { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.total_tokens };
}

/** What the graph asks its caller to run, said in words. */
function callsText(calls: { name: string; arguments: unknown }[]): string {
  const list = calls.map((call) => `${call.name}(${JSON.stringify(call.arguments)})`).join(", ");
  return `The model asks its caller to run ${list}; this tool cannot send the tool's result back.`;
}

function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A finished run: its text, its citations (also as links), its usage, and its artifacts as links. */
export function answerResult(output: AssistantOutput, usage: Usage | undefined, artifacts: readonly ResourceLink[]): ToolResult {
  const citations = output.annotations.map(({ url_citation: citation }) => ({
    url: citation.url,
    title: citation.title,
    start_index: citation.start_index,
    end_index: citation.end_index,
  }));
  const toolCalls = output.toolCalls.map((call) => ({ name: call.function.name, arguments: parsedArguments(call.function.arguments) }));
  const text = output.text === "" && toolCalls.length > 0 ? callsText(toolCalls) : output.text;
  const links: ResourceLink[] = citations.map((citation) => ({
    type: "resource_link",
    uri: citation.url,
    name: citation.title || citation.url,
    description: "A source the answer cites.",
  }));
  return {
    content: [{ type: "text", text }, ...links, ...artifacts],
    structuredContent: {
      status: output.finishReason === "length" ? "incomplete" : "completed",
      text: output.text,
      citations,
      usage: usageOf(usage),
      ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
    },
  };
}

/**
 * A paused run for a client that cannot answer inside the call: the question in words, with
 * how to answer it (the `resume` tool), and the run and its state token in `structuredContent`.
 */
export function interruptResult(
  tool: string,
  output: AssistantOutput,
  calls: readonly InterruptArguments[],
  usage: Usage | undefined,
  artifacts: readonly ResourceLink[],
): ToolResult {
  const questions = calls.map((call) => {
    const { question, options } = readQuestion(call.payload);
    return { question: question ?? JSON.stringify(call.payload), ...(options === undefined ? {} : { options }), payload: call.payload };
  });
  const asked = calls
    .map((call) => questionText(call.payload, (payload) => JSON.stringify(payload)))
    .map((line, index) => (calls.length === 1 ? line : `${index + 1}. ${line}`))
    .join("\n");
  const { run_id: runId, state_token: stateToken } = calls[0]!;
  const how = `To answer, call the ${RESUME_TOOL} tool with ${JSON.stringify({ tool, run_id: runId, state_token: stateToken, answer: "…" })}${
    questions.length > 1 ? ", answering each question on its own line, numbered like the questions" : ""
  }.`;
  const before = output.text.trim() === "" ? "" : `${output.text.trimEnd()}\n\n`;
  return {
    content: [{ type: "text", text: `${before}The run paused to ask:\n${asked}\n\n${how}` }, ...artifacts],
    structuredContent: {
      status: "interrupted",
      text: output.text,
      usage: usageOf(usage),
      interrupt: { tool, run_id: runId, state_token: stateToken, questions },
    },
  };
}

/** Where an error's `param` points in a tool's arguments: the settings are the `settings` argument. */
function argumentOf(param: string | null): string | null {
  return param === "metadata.graph_runtime_settings" ? "settings" : param;
}

/** A run that failed (or a call refused before it ran): the OpenAI-style error, as the tool's error. */
export function failedResult(error: ServeError): ToolResult {
  return {
    content: [{ type: "text", text: error.message }],
    structuredContent: {
      status: "failed",
      text: "",
      error: { message: error.message, type: error.type, code: error.code, param: argumentOf(error.param) },
    },
    isError: true,
  };
}

/** A run that ended because the person declined to answer its question. */
export function declinedResult(output: AssistantOutput, usage: Usage | undefined): ToolResult {
  const text = "You declined to answer, so the run was stopped and will not go on.";
  return {
    content: [{ type: "text", text }],
    structuredContent: { status: "completed", text: output.text, citations: [], usage: usageOf(usage) },
  };
}
