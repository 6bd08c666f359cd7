import { agentInboxRequest, inboxQuestion } from "./agent-inbox.js";

/** What a person is asked by one interrupt: its question (absent when the payload has none) and the options it offers. */
export interface InterruptQuestion {
  question?: string;
  options?: string[];
}

/**
 * Reads an interrupt's payload the way a person reads it: a string is the question; an object's
 * `question` (or `message`) is, with its `options` when they are strings. Any other payload
 * has no question a client can show as text.
 */
export function readQuestion(payload: unknown): InterruptQuestion {
  if (typeof payload === "string") return { question: payload };
  // An Agent Inbox request: what the agent wants to do and how to answer, in words.
  const inbox = agentInboxRequest(payload);
  if (inbox !== undefined) return { question: inboxQuestion(inbox) };
  if (typeof payload !== "object" || payload === null) return {};
  const { question, message, options } = payload as { question?: unknown; message?: unknown; options?: unknown };
  const text = typeof question === "string" ? question : typeof message === "string" ? message : undefined;
  if (text === undefined) return {};
  const choices =
    Array.isArray(options) && options.length > 0 && options.every((option) => typeof option === "string") ? options : undefined;
  return { question: text, ...(choices === undefined ? {} : { options: choices as string[] }) };
}

/** The question as one line of text: the payload as JSON when it has no question. */
export function questionText(payload: unknown, json: (value: unknown) => string): string {
  const { question, options } = readQuestion(payload);
  if (question === undefined) return json(payload);
  return options === undefined ? question : `${question} (${options.join(" / ")})`;
}
