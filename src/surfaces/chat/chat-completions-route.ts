import type { FastifyReply, FastifyRequest } from "fastify";
import { type CompletionIdentity, toChatCompletion } from "../../dialects/chat/completion.js";
import { type CompletionChunks, completionChunks, completionFrames } from "../../dialects/chat/completion-chunks.js";
import { parseChatRequest } from "../../dialects/chat/parse-chat-request.js";
import { conversationEvents, fixedAnswer, uiChunk, withThinking } from "../../dialects/chat-ui/conversation.js";
import { parseChatUiRequest } from "../../dialects/chat-ui/parse-chat-ui-request.js";
import { InterruptStateConflictError, InvalidResumeError } from "../../errors/catalogue.js";
import { isChatServeError } from "../../errors/serve-error.js";
import { toServeError } from "../../errors/to-serve-error.js";
import { errorBody } from "../../http/error-mapper.js";
import { idempotent } from "../../http/idempotency.js";
import { type ClientProfile, observedEvents, type RunRouteOptions, runForRequest, streamErrorBody } from "../../http/run-request.js";
import { writeSse } from "../../http/sse-writer.js";
import { spokenBatch } from "../../runs/interrupts/spoken-interrupts.js";
import type { RunStreamEvent } from "../../runs/stream-run.js";
import { collectRun, streamRun } from "../../runs/stream-run.js";
import { sessionThread } from "../../runs/threads/run-thread.js";
import { randomHex } from "../../util/random-hex.js";

/** Which wire a request gets: the strict one, or the one chat UIs can use. */

export interface ChatRouteOptions extends RunRouteOptions {
  /** The profile of this mount; a caller's API key may choose another. */
  profile: ClientProfile;
  /** In the `chat-ui` profile, answer a UI's task prompts (titles, tags) without running the graph. */
  answerTasks: boolean;
}

function completionId(): string {
  return `chatcmpl-${randomHex()}`;
}

/** The chunks of the `chat-ui` profile: the strict ones with client events as the UI's own. */
function uiChunks(chunks: CompletionChunks): CompletionChunks {
  return { first: chunks.first.map(uiChunk), of: (event) => chunks.of(event).map(uiChunk) };
}

/** An answer that runs no graph (a UI task, or a resume problem said in words), complete or streamed. */
async function answerWith(reply: FastifyReply, options: ChatRouteOptions, identity: CompletionIdentity, stream: boolean, text: string) {
  const events: AsyncIterable<RunStreamEvent> = fixedAnswer(text);
  if (!stream) return toChatCompletion(identity, { text, toolCalls: [], annotations: [], finishReason: "stop" }, undefined);
  await writeSse(
    reply,
    events,
    { keepAliveMs: options.keepAliveMs, stalledClientMs: options.stalledClientMs, errorFrame: (error) => errorBody(toServeError(error)) },
    completionChunks(identity, false),
  );
  return reply;
}

/** A resume the person can fix (a stale or malformed answer) is shown as a message, not an HTTP error a UI hides. */
function readableProblem(error: unknown): string | undefined {
  if (isChatServeError(error, InterruptStateConflictError) || isChatServeError(error, InvalidResumeError)) {
    return `⚠️ ${(error as Error).message}`;
  }
  return undefined;
}

/**
 * The `chat-ui` profile: a paused run is a question in the text with a resumable marker, a
 * reply after it resumes the run, client events are the UI's `event` objects, and a UI's task
 * prompts are answered at once.
 */
async function chatUiCompletion(request: FastifyRequest, reply: FastifyReply, options: ChatRouteOptions) {
  const stream = (request.body as { stream?: unknown } | null)?.stream === true;
  const identity = () => ({
    id: completionId(),
    created: Math.floor(Date.now() / 1000),
    model: String((request.body as { model?: unknown }).model ?? ""),
  });
  let parsed: ReturnType<typeof parseChatUiRequest>;
  try {
    parsed = parseChatUiRequest(request.body, request.headers, options.answerTasks);
  } catch (error) {
    const problem = readableProblem(error);
    if (problem === undefined) throw error;
    return answerWith(reply, options, identity(), stream, problem);
  }
  const body = parsed.request;
  if (parsed.fixedAnswer !== undefined) return answerWith(reply, options, identity(), stream, parsed.fixedAnswer);
  try {
    return await runForRequest(
      request,
      reply,
      options,
      body,
      async (run) => {
        if (!stream) {
          const { output, usage } = await collectRun(run);
          return toChatCompletion(identity(), spokenBatch(withThinking(output)), usage);
        }
        const includeUsage = body.stream_options?.include_usage === true;
        const events = observedEvents(request, options, run, conversationEvents(streamRun(run)));
        await writeSse(
          reply,
          events,
          {
            keepAliveMs: options.keepAliveMs,
            stalledClientMs: options.stalledClientMs,
            errorFrame: (error) => errorBody(streamErrorBody(request, reply, options, run, error)),
          },
          uiChunks(completionChunks(identity(), includeUsage)),
        );
        return reply;
      },
      { resumeOf: parsed.resumeOf, thread: sessionThread(body), toolEventsByDefault: true },
    );
  } catch (error) {
    const problem = readableProblem(error);
    if (problem === undefined || reply.sent) throw error;
    return answerWith(reply, options, identity(), stream, problem);
  }
}

/** `POST /chat/completions`: complete or streamed, in the mount's (or the API key's) profile. */
export function answerChatCompletion(request: FastifyRequest, reply: FastifyReply, options: ChatRouteOptions) {
  return idempotent(request, reply, options, "chat.completions", async () => {
    if ((request.chatServeCaller?.profile ?? options.profile) === "chat-ui") return chatUiCompletion(request, reply, options);
    const body = parseChatRequest(request.body);
    return runForRequest(
      request,
      reply,
      options,
      body,
      async (run) => {
        const identity = { id: completionId(), created: Math.floor(Date.now() / 1000), model: body.model };
        if (body.stream !== true) {
          const { output, usage } = await collectRun(run);
          return toChatCompletion(identity, output, usage);
        }
        const includeUsage = body.stream_options?.include_usage === true;
        await writeSse(
          reply,
          observedEvents(request, options, run, streamRun(run)),
          {
            keepAliveMs: options.keepAliveMs,
            stalledClientMs: options.stalledClientMs,
            errorFrame: (error) => errorBody(streamErrorBody(request, reply, options, run, error)),
          },
          completionFrames(identity, includeUsage),
        );
        return reply;
      },
      { thread: sessionThread(body) },
    );
  });
}
