import { contentToText } from "@ag-ui/core";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import type { z } from "zod";
import { InvalidRequestError } from "../../errors/catalogue.js";
import type { ResumeOf } from "../../runs/interrupts/interrupt-run.js";
import { bodyIssue } from "../../util/describe-issue.js";
import { parseChatRequest } from "../chat/parse-chat-request.js";

// AG-UI 1.0's `RunAgentInput`, checked with `@ag-ui/core`'s own schema, read into the one engine
// request every surface makes (a chat request): `threadId` names the session, `messages` are the
// conversation, `tools` the frontend's tools, `resume` answers the interrupts of the run before.

/**
 * An interrupt's id carries what resuming it needs (the run, its batch's token, the pause's
 * tool call), so a resume entry that names it is enough: opaque to the client, as ids are.
 */
export function interruptId(callId: string, runId: string, stateToken: string): string {
  return `gi_${Buffer.from(JSON.stringify({ c: callId, r: runId, s: stateToken })).toString("base64url")}`;
}

function readInterruptId(id: string, index: number): { callId: string; runId: string; stateToken: string } {
  try {
    if (!id.startsWith("gi_")) throw new Error("not ours");
    const value = JSON.parse(Buffer.from(id.slice(3), "base64url").toString("utf8")) as { c?: unknown; r?: unknown; s?: unknown };
    if (typeof value.c === "string" && typeof value.r === "string" && typeof value.s === "string") {
      return { callId: value.c, runId: value.r, stateToken: value.s };
    }
  } catch {}
  throw new InvalidRequestError(`resume.${index}.interruptId: ${id.slice(0, 80)} is not an interrupt this server sent.`, {
    param: `resume.${index}.interruptId`,
  });
}

type Input = ReturnType<typeof RunAgentInputSchema.parse>;
type InputMessage = Input["messages"][number];

/** An AG-UI message as a chat message; reasoning and activity messages are the client's own record. */
function chatMessage(message: InputMessage): Record<string, unknown>[] {
  switch (message.role) {
    case "user":
      return [{ role: "user", content: contentToText(message.content) }];
    case "system":
    case "developer":
      return [{ role: "system", content: contentToText(message.content) }];
    case "assistant": {
      const calls = (message.toolCalls ?? []).map((call) => ({ id: call.id, type: "function", function: call.function }));
      const text = contentToText(message.content);
      return [
        { role: "assistant", content: text === "" && calls.length > 0 ? null : text, ...(calls.length === 0 ? {} : { tool_calls: calls }) },
      ];
    }
    case "tool":
      return [
        {
          role: "tool",
          tool_call_id: message.toolCallId,
          content: message.error === undefined ? contentToText(message.content) : JSON.stringify({ error: message.error }),
        },
      ];
    default:
      return [];
  }
}

/** The run AG-UI asked for, as the engine's chat request for `model`, its session, and its resume. */
export function parseRunInput(
  model: string,
  body: unknown,
): { input: Input; request: ReturnType<typeof parseChatRequest>; resumeOf: ResumeOf | undefined } {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const { message, param } = bodyIssue(parsed.error as unknown as z.ZodError);
    throw new InvalidRequestError(message, { param });
  }
  const input = parsed.data;
  let resumeOf: ResumeOf | undefined;
  if (input.resume !== undefined && input.resume.length > 0) {
    const entries = input.resume.map((entry, index) => ({ entry, ...readInterruptId(entry.interruptId, index) }));
    const [first] = entries;
    if (entries.some((entry) => entry.runId !== first!.runId || entry.stateToken !== first!.stateToken)) {
      throw new InvalidRequestError("resume: its entries answer interrupts of different runs; answer one run's interrupts at a time.", {
        param: "resume",
      });
    }
    resumeOf = {
      runId: first!.runId,
      stateToken: first!.stateToken,
      // A cancelled entry resumes the graph with null: it decides what abandoning means.
      answers: entries.map(({ entry, callId }) => ({
        toolCallId: callId,
        value: entry.status === "cancelled" ? null : (entry.payload ?? null),
      })),
    };
  }
  const messages = input.messages.flatMap(chatMessage);
  const request = parseChatRequest({
    model,
    // A run with no messages yet (a resume may carry none: the graph goes on from its checkpoint).
    messages: messages.length === 0 ? [{ role: "user", content: "" }] : messages,
    stream: true,
    stream_options: { include_usage: true },
    ...(input.tools.length === 0
      ? {}
      : {
          tools: input.tools.map((tool) => ({
            type: "function",
            function: { name: tool.name, description: tool.description, parameters: tool.parameters ?? { type: "object", properties: {} } },
          })),
        }),
    metadata: { session_id: input.threadId, graph_stream_events: "v1" },
  });
  return { input, request, resumeOf };
}
