import { agentInboxRequest, allowedChoices, type HumanInterrupt } from "../../runs/interrupts/agent-inbox.js";
import { readQuestion } from "../../runs/interrupts/interrupt-question.js";

/** One field of an elicitation's form: MCP's primitive schemas. */
type FormField =
  | { type: "string"; title: string; description?: string; enum?: string[] }
  | { type: "number"; title: string; description?: string }
  | { type: "boolean"; title: string; description?: string; default?: boolean };

/** The `elicitation/create` parameters of one interrupt (form mode). */
export interface InterruptElicitation {
  mode: "form";
  message: string;
  requestedSchema: { type: "object"; properties: Record<string, FormField>; required: string[] };
}

/** What the person may do, as the form offers it. */
const CHOICE_TITLES = { accept: "accept", edit: "edit the arguments", respond: "respond in words", ignore: "ignore" } as const;

/**
 * An Agent Inbox request as a form: what to do (the answers it allows), a response in words
 * when it takes one, and each argument of the action to edit (its current value said; a field
 * left empty keeps it).
 */
function inboxForm(request: HumanInterrupt, message: string): InterruptElicitation {
  const choices = allowedChoices(request);
  const properties: Record<string, FormField> = {
    response_type: {
      type: "string",
      title: "What to do",
      enum: choices,
      description: choices.map((choice) => `${choice}: ${CHOICE_TITLES[choice]}`).join("; "),
    },
  };
  if (choices.includes("respond"))
    properties.response = { type: "string", title: "Your response", description: "When you respond in words." };
  if (choices.includes("edit")) {
    for (const [name, value] of Object.entries(request.action_request.args)) {
      const title = `${request.action_request.action}: ${name}`;
      const now = `When you edit; now ${typeof value === "string" ? value : JSON.stringify(value)} (left empty, it stays).`;
      properties[`args_${name}`] =
        typeof value === "number"
          ? { type: "number", title, description: now }
          : typeof value === "boolean"
            ? { type: "boolean", title, description: now, default: value }
            : { type: "string", title, description: now };
    }
  }
  return { mode: "form", message, requestedSchema: { type: "object", properties, required: ["response_type"] } };
}

/**
 * One interrupt as an elicitation: the question as the message (the payload as JSON when it
 * has none) and a one-field form, `answer`: a choice of the payload's `options` when it offers
 * some, free text otherwise. `position` numbers the questions of a batch ("1 of 2").
 */
export function elicitationFor(payload: unknown, position?: { index: number; count: number }): InterruptElicitation {
  const { question, options } = readQuestion(payload);
  const asked = question ?? `The run paused and asks for an answer to:\n${JSON.stringify(payload, null, 2)}`;
  const numbered = position === undefined || position.count < 2 ? asked : `(${position.index + 1} of ${position.count}) ${asked}`;
  const inbox = agentInboxRequest(payload);
  if (inbox !== undefined) return inboxForm(inbox, numbered);
  return {
    mode: "form",
    message: numbered,
    requestedSchema: {
      type: "object",
      properties: {
        answer:
          options === undefined
            ? { type: "string", title: "Answer", description: "Your answer." }
            : { type: "string", title: "Answer", description: "Choose one.", enum: options },
      },
      required: ["answer"],
    },
  };
}

/**
 * The value an accepted elicitation hands to `interrupt()`: the form's answer; for an Agent
 * Inbox request, the whole form (read as its `HumanResponse[]` where the run resumes).
 */
export function elicitedAnswer(content: Record<string, unknown> | undefined, payload?: unknown): unknown {
  if (agentInboxRequest(payload) !== undefined) return content ?? {};
  const answer = content?.answer;
  return typeof answer === "string" ? answer : JSON.stringify(answer ?? null);
}
