// Tool calls waiting for an answer: an interrupt's question with its options, or a tool's arguments.

import { node, parseOr, scrollToEnd } from "./dom.js";

const INTERRUPT_TOOL = "graph_interrupt";

/** What an interrupt asks: its question as text and its options, from the usual payload shapes. */
function readQuestion(payload) {
  if (typeof payload === "string") return { question: payload, options: [] };
  const object = typeof payload === "object" && payload !== null ? payload : {};
  const question = [object.question, object.message, object.prompt, object.text].find((value) => typeof value === "string");
  const options = (Array.isArray(object.options) ? object.options : Array.isArray(object.choices) ? object.choices : [])
    .map((option) =>
      typeof option === "object" && option !== null
        ? { label: String(option.label ?? option.value ?? JSON.stringify(option)), value: option.value ?? option.label ?? option }
        : { label: String(option), value: option },
    )
    .slice(0, 12);
  return { question, options };
}

/**
 * Tool calls wait for an answer: an interrupt shows its question and its options as buttons
 * (a free answer beside them), another tool its arguments. The answers go back as tool
 * messages, which resumes the run; until then the composer waits, and the card then says what
 * was answered.
 */
export function showToolCalls(turn, { messages, sendTurn, setAwaitingAnswer }) {
  const answers = [];
  for (const call of turn.toolCalls) {
    const interrupt = call.function.name === INTERRUPT_TOOL;
    const card = node("div", interrupt ? "tool-call interrupt" : "tool-call");
    const args = parseOr(call.function.arguments, call.function.arguments);
    const entry = { call, card, value: undefined, answer: undefined, buttons: [] };
    if (interrupt) {
      const payload = args?.payload ?? args;
      const { question, options } = readQuestion(payload);
      card.append(node("div", "call-title", "The graph asks"));
      if (question !== undefined) card.append(node("p", "question", question));
      else card.append(node("pre", "payload", JSON.stringify(payload, null, 2)));
      if (options.length > 0) {
        const row = node("div", "options");
        for (const option of options) {
          const button = node("button", "option", option.label);
          button.type = "button";
          button.addEventListener("click", () => {
            entry.value = option.value;
            void submit();
          });
          row.append(button);
          entry.buttons.push(button);
        }
        card.append(row);
      }
    } else {
      card.append(node("div", "call-title", `Tool call: ${call.function.name}`));
      card.append(node("pre", "payload", typeof args === "string" ? args : JSON.stringify(args, null, 2)));
    }
    const answer = document.createElement("textarea");
    answer.className = "answer";
    answer.rows = 2;
    answer.placeholder = interrupt
      ? entry.buttons.length > 0
        ? "Or write another answer (text, or JSON for a structured value)"
        : "Your answer: text, or JSON for a structured value"
      : `The result of ${call.function.name}`;
    card.append(answer);
    entry.answer = answer;
    turn.calls.append(card);
    answers.push(entry);
  }
  const send = node("button", "answer-send", answers.length === 1 ? "Send answer" : "Send answers");
  send.type = "button";
  const controls = () => answers.flatMap((entry) => [entry.answer, ...entry.buttons]).concat(send);

  async function submit() {
    const pending = messages.length;
    const given = answers.map((entry) => {
      const text = entry.answer.value;
      const interrupt = entry.call.function.name === INTERRUPT_TOOL;
      const value = entry.value !== undefined ? entry.value : interrupt ? parseOr(text, text) : text;
      return { entry, value, content: interrupt ? JSON.stringify({ resume: value }) : String(value) };
    });
    for (const { entry, content } of given) messages.push({ role: "tool", tool_call_id: entry.call.id, content });
    for (const control of controls()) control.disabled = true;
    setAwaitingAnswer(false);
    if (await sendTurn()) {
      // Answered: the card keeps the question and shows the answer in place of the controls.
      for (const { entry, value } of given) {
        entry.card.classList.add("answered");
        for (const control of [entry.answer, ...entry.buttons]) control.remove();
        entry.buttons[0]?.parentElement?.remove();
        entry.card.append(node("p", "given-answer", `Answered: ${typeof value === "string" ? value : JSON.stringify(value)}`));
      }
      send.remove();
      return;
    }
    // Not sent (stopped, or refused): the question is still open; let the person try again.
    messages.length = pending;
    for (const { entry } of given) entry.value = undefined;
    for (const control of controls()) control.disabled = false;
    setAwaitingAnswer(true);
  }

  send.addEventListener("click", () => void submit());
  turn.calls.append(send);
  setAwaitingAnswer(true);
  (answers[0]?.buttons[0] ?? answers[0]?.answer)?.focus();
  scrollToEnd();
}
