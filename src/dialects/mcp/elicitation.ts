import { readQuestion } from "../../runs/interrupts/interrupt-question.js";

/** The `elicitation/create` parameters of one interrupt (form mode). */
export interface InterruptElicitation {
  mode: "form";
  message: string;
  requestedSchema: {
    type: "object";
    properties: { answer: { type: "string"; title: string; description?: string; enum?: string[] } };
    required: ["answer"];
  };
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

/** The value an accepted elicitation hands to `interrupt()`: the form's answer. */
export function elicitedAnswer(content: Record<string, unknown> | undefined): string {
  const answer = content?.answer;
  return typeof answer === "string" ? answer : JSON.stringify(answer ?? null);
}
