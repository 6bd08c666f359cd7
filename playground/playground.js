// The chat-serve playground: a plain OpenAI client in the browser, with no build step and no
// dependencies. It reads the models from `{prefix}/models`, builds a settings form from each
// model's client-settings JSON Schema and talks to `{prefix}/chat/completions`, showing what
// chat-serve adds to the wire: status, progress and artifact events, citations, usage,
// interrupts (answered here to resume the run) and tool calls.

const api = document.documentElement.dataset.api ?? "";
const INTERRUPT_TOOL = "graph_interrupt";

const $ = (id) => document.getElementById(id);
const elements = {
  apiKey: $("api-key"),
  model: $("model"),
  description: $("model-description"),
  features: $("model-features"),
  diagram: $("graph-diagram"),
  drawing: $("graph-drawing"),
  diagramHint: $("graph-hint"),
  diagramSource: $("graph-source"),
  settings: $("settings"),
  settingsFields: $("settings-fields"),
  settingsReset: $("settings-reset"),
  noSettings: $("no-settings"),
  newChat: $("new-chat"),
  transcript: $("transcript"),
  composer: $("composer"),
  prompt: $("prompt"),
  stream: $("stream"),
  send: $("send"),
  stop: $("stop"),
};

/** The page's whole state: the model picked, its details, and the conversation so far. */
const state = {
  /** @type {Record<string, any> | undefined} the model object of `GET /models/{id}` */
  model: undefined,
  /** @type {any[]} the OpenAI messages sent so far (and the answers to them) */
  messages: [],
  /** @type {AbortController | undefined} the request in flight */
  inFlight: undefined,
  /** The conversation's session: a stateful model keeps it on a thread. New with each new chat. */
  session: newSessionId(),
  /** Tool calls (an interrupt's question among them) waiting for their answers: the composer waits too. */
  awaitingAnswer: false,
};

/** A random session id (getRandomValues works on plain http too, where randomUUID does not). */
function newSessionId() {
  return `playground-${Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** Creates an element with a class and text; text is always text, never HTML. */
function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

/** A link only for http(s) URLs; anything else is shown as text. */
function safeLink(url, label) {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") {
      const link = node("a", "", label || url);
      link.href = parsed.href;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      return link;
    }
  } catch {
    // Not a URL: shown as text below.
  }
  return node("span", "", label || String(url));
}

function scrollToEnd() {
  elements.transcript.lastElementChild?.scrollIntoView({ block: "end" });
}

/** Requests to this API, with the API key typed in the header (kept for this browser tab only). */
function call(path, init = {}) {
  const headers = new Headers(init.headers);
  const key = elements.apiKey.value.trim();
  if (key !== "") headers.set("authorization", `Bearer ${key}`);
  return fetch(`${api}${path}`, { ...init, headers });
}

async function readJson(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: text || `${response.status} ${response.statusText}` } };
  }
}

// ---- models and settings ------------------------------------------------------------------

async function loadModels() {
  const response = await call("/models");
  const body = await readJson(response);
  if (response.status === 401)
    throw new Error(`${body.error?.message ?? "This server needs an API key."} Type it in the API key box above.`);
  if (!response.ok) throw new Error(body.error?.message ?? `GET ${api}/models answered ${response.status}`);
  elements.model.replaceChildren(...body.data.map((model) => new Option(model.id, model.id)));
  const wanted = new URLSearchParams(location.search).get("model");
  if (wanted && body.data.some((model) => model.id === wanted)) elements.model.value = wanted;
  elements.model.disabled = false;
  await selectModel(elements.model.value);
}

async function selectModel(id) {
  const response = await call(`/models/${encodeURIComponent(id)}`);
  const model = await readJson(response);
  if (!response.ok) throw new Error(model.error?.message ?? `GET ${api}/models/${id} answered ${response.status}`);
  state.model = model;
  const extension = model.graph_chat_serve ?? {};
  elements.description.textContent = extension.description ?? "";
  elements.features.replaceChildren(...(extension.features ?? []).map((feature) => node("li", "badge", feature)));
  renderSettingsForm(extension.client_settings);
  void showDiagram(id);
  const url = new URL(location.href);
  url.searchParams.set("model", id);
  history.replaceState(null, "", url);
  resetConversation();
  elements.send.disabled = false;
}

// ---- the graph's diagram ------------------------------------------------------------------

let diagrams = 0;
/** Mermaid, loaded once from this server (the optional `mermaid` package), never from a CDN. */
let mermaidLoaded;

function loadMermaid(src) {
  mermaidLoaded ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => {
      window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral" });
      resolve(window.mermaid);
    };
    script.onerror = () => reject(new Error("the diagram renderer did not load"));
    document.head.append(script);
  });
  return mermaidLoaded;
}

/** LangGraph's Mermaid drawing of the model's graph, rendered here when the renderer is installed. */
async function showDiagram(id) {
  elements.diagram.hidden = true;
  elements.drawing.replaceChildren();
  elements.diagramHint.hidden = true;
  const response = await call(`/playground/graph/${encodeURIComponent(id)}`);
  if (!response.ok || state.model?.id !== id) return;
  const { mermaid: source, renderer } = await response.json();
  if (typeof source !== "string") return;
  elements.diagramSource.textContent = source;
  elements.diagram.hidden = false;
  if (typeof renderer !== "string") {
    elements.diagramHint.textContent =
      "Install the optional mermaid package next to chat-serve (npm install mermaid) to see it drawn here.";
    elements.diagramHint.hidden = false;
    return;
  }
  try {
    const mermaid = await loadMermaid(renderer);
    diagrams += 1;
    const { svg } = await mermaid.render(`graph-diagram-${diagrams}`, source);
    // Mermaid's own output, sanitised by it (securityLevel "strict"), for the model still shown.
    if (state.model?.id === id) elements.drawing.innerHTML = svg;
  } catch (error) {
    elements.diagramHint.textContent = `The diagram could not be drawn: ${error instanceof Error ? error.message : String(error)}`;
    elements.diagramHint.hidden = false;
  }
}

/** One form control per top-level property of the settings schema. */
function renderSettingsForm(descriptor) {
  elements.settingsFields.replaceChildren();
  elements.settings.hidden = descriptor === undefined;
  elements.noSettings.hidden = descriptor !== undefined;
  if (descriptor === undefined) return;
  const schema = descriptor.json_schema ?? {};
  const defaults = descriptor.defaults ?? {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const field = node("label", "field");
    field.append(node("span", "field-name", name));
    const control = settingControl(name, property);
    field.append(control);
    if (property.description) field.append(node("span", "hint", property.description));
    elements.settingsFields.append(field);
  }
  fillSettings(defaults);
}

function settingControl(name, property) {
  let control;
  if (Array.isArray(property.enum)) {
    control = document.createElement("select");
    for (const value of property.enum) control.append(new Option(String(value), JSON.stringify(value)));
    control.dataset.kind = "enum";
  } else if (property.type === "boolean") {
    control = document.createElement("input");
    control.type = "checkbox";
    control.dataset.kind = "boolean";
  } else if (property.type === "integer" || property.type === "number") {
    control = document.createElement("input");
    control.type = "number";
    if (property.minimum !== undefined) control.min = String(property.minimum);
    if (property.maximum !== undefined) control.max = String(property.maximum);
    control.step = property.type === "integer" ? "1" : "any";
    control.dataset.kind = "number";
  } else if (property.type === "string") {
    control = document.createElement("input");
    control.type = "text";
    control.dataset.kind = "string";
  } else {
    control = document.createElement("textarea");
    control.rows = 2;
    control.placeholder = "JSON";
    control.dataset.kind = "json";
  }
  control.name = name;
  return control;
}

function fillSettings(values) {
  for (const control of elements.settingsFields.querySelectorAll("[name]")) {
    const value = values[control.name];
    if (control.dataset.kind === "boolean") control.checked = value === true;
    else if (control.dataset.kind === "enum") control.value = JSON.stringify(value);
    else if (control.dataset.kind === "json") control.value = value === undefined ? "" : JSON.stringify(value);
    else control.value = value === undefined ? "" : String(value);
  }
}

/**
 * The form's values as the settings object. Nothing is checked here: a value the schema
 * refuses goes to the server as typed, and its 400 is shown.
 */
function readSettings() {
  const settings = {};
  for (const control of elements.settingsFields.querySelectorAll("[name]")) {
    const kind = control.dataset.kind;
    if (kind === "boolean") settings[control.name] = control.checked;
    else if (kind === "enum") settings[control.name] = JSON.parse(control.value);
    else if (control.value.trim() === "") continue;
    else if (kind === "number") settings[control.name] = Number.isNaN(Number(control.value)) ? control.value : Number(control.value);
    else if (kind === "json") settings[control.name] = parseOr(control.value, control.value);
    else settings[control.name] = control.value;
  }
  return settings;
}

function parseOr(text, fallback) {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

// ---- the transcript -----------------------------------------------------------------------

function resetConversation() {
  state.inFlight?.abort();
  setAwaitingAnswer(false);
  state.messages = [];
  state.session = newSessionId();
  elements.transcript.replaceChildren();
}

function addUserTurn(text) {
  const item = node("li", "turn user");
  item.append(node("div", "who", "you"), node("div", "content", text));
  elements.transcript.append(item);
  scrollToEnd();
  return item;
}

/** The view of one assistant answer, filled in as the stream arrives. */
class AssistantTurn {
  constructor(modelId) {
    this.item = node("li", "turn assistant");
    this.item.append(node("div", "who", modelId));
    this.events = node("div", "events");
    this.statuses = node("ul", "statuses");
    this.progress = node("div", "progress-list");
    this.artifacts = node("ul", "artifacts");
    this.events.append(this.statuses, this.progress, this.artifacts);
    // The model's reasoning, collapsed above the answer (a <details> the reader opens).
    this.reasoning = node("details", "reasoning");
    this.reasoning.hidden = true;
    this.reasoningText = node("div", "reasoning-text");
    this.reasoning.append(node("summary", "", "Reasoning"), this.reasoningText);
    this.content = node("div", "content");
    this.citations = node("ol", "citations");
    this.calls = node("div", "tool-calls");
    this.footer = node("div", "usage");
    this.item.append(this.events, this.reasoning, this.content, this.citations, this.calls, this.footer);
    this.text = "";
    this.toolCalls = [];
    this.progressBars = new Map();
    this.item.classList.add("pending");
    elements.transcript.append(this.item);
    scrollToEnd();
  }

  appendReasoning(delta) {
    this.reasoning.hidden = false;
    this.reasoningText.textContent += delta;
    scrollToEnd();
  }

  appendText(delta) {
    this.text += delta;
    this.content.textContent = this.text;
    scrollToEnd();
  }

  /** Tool-call deltas, merged by index as OpenAI streams them. */
  mergeToolCalls(deltas) {
    for (const delta of deltas) {
      const index = delta.index ?? this.toolCalls.length;
      this.toolCalls[index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const call = this.toolCalls[index];
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.function.name += delta.function.name;
      if (delta.function?.arguments) call.function.arguments += delta.function.arguments;
    }
  }

  /** A `graph_chat_serve` client event: status, progress or artifact. */
  showEvent(event) {
    const data = event.data ?? {};
    const where = (event.namespace ?? []).join(" › ");
    if (event.type === "status") {
      if (data.hidden) return;
      for (const previous of this.statuses.querySelectorAll("li.running")) previous.className = "done";
      const line = node("li", data.done ? "done" : "running", data.description ?? "");
      if (where) line.prepend(node("span", "namespace", where));
      this.statuses.append(line);
    } else if (event.type === "progress") {
      const key = `${where}/${data.stage ?? ""}`;
      let row = this.progressBars.get(key);
      if (row === undefined) {
        row = { element: node("div", "progress"), bar: document.createElement("progress"), label: node("span", "progress-label") };
        row.element.append(row.bar, row.label);
        this.progress.append(row.element);
        this.progressBars.set(key, row);
      }
      if (typeof data.total === "number" && data.total > 0) {
        row.bar.max = data.total;
        row.bar.value = Number(data.completed ?? 0);
      }
      const count = typeof data.total === "number" ? ` (${data.completed ?? 0}/${data.total})` : "";
      row.label.textContent = `${data.message ?? data.stage ?? "progress"}${count}`;
    } else if (event.type === "artifact") {
      const line = node("li", "artifact");
      line.append(node("span", "kind", "artifact"), " ");
      line.append(data.url ? safeLink(data.url, data.title ?? data.id) : node("span", "", data.title ?? data.id ?? JSON.stringify(data)));
      this.artifacts.append(line);
    }
    scrollToEnd();
  }

  showCitations(annotations) {
    for (const annotation of annotations ?? []) {
      const citation = annotation.url_citation;
      if (annotation.type !== "url_citation" || citation === undefined) continue;
      const line = node("li", "citation");
      line.append(safeLink(citation.url, citation.title || citation.url));
      const cited = [...this.text].slice(citation.start_index, citation.end_index + 1).join("");
      if (cited) line.append(node("span", "cited", ` “${cited}”`));
      this.citations.append(line);
    }
  }

  showUsage(usage) {
    if (!usage) return;
    this.footer.textContent = `usage: ${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion = ${usage.total_tokens} tokens`;
  }

  /** The person pressed Stop: said plainly, not as an error. */
  showStopped() {
    this.item.append(node("div", "stopped", "stopped"));
    this.item.classList.add("was-stopped");
    scrollToEnd();
  }

  showError(error) {
    const box = node("div", "error");
    box.append(node("strong", "", error.code ? `${error.code}: ` : "error: "), error.message ?? String(error));
    if (error.param) box.append(node("span", "param", ` (${error.param})`));
    this.item.append(box);
    this.item.classList.add("failed");
    scrollToEnd();
  }

  finish(reason) {
    this.item.classList.remove("pending");
    if (reason) this.item.dataset.finishReason = reason;
    const ended = this.item.classList.contains("failed") || this.item.classList.contains("was-stopped");
    if (this.text === "" && this.toolCalls.length === 0 && !ended) this.content.textContent = "(no text)";
  }
}

// ---- talking to the server ----------------------------------------------------------------

function requestBody(stream) {
  const model = state.model;
  const extension = model.graph_chat_serve ?? {};
  const body = { model: model.id, messages: state.messages, stream };
  // A stateful model continues its thread from the last turn; the others ignore the session.
  const metadata = { session_id: state.session };
  if (extension.client_settings !== undefined) metadata.graph_runtime_settings = JSON.stringify(readSettings());
  if (stream) {
    body.stream_options = { include_usage: true };
    if (extension.capabilities?.client_events !== undefined) metadata.graph_stream_events = "v1";
  }
  body.metadata = metadata;
  return body;
}

/** The `data:` payloads of a server-sent event stream, as they arrive. */
async function* serverSentData(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /u, ""))
        .join("\n");
      if (data !== "") yield data;
      end = buffer.indexOf("\n\n");
    }
  }
}

/** Sends the conversation and shows the answer; returns once it is complete or failed. */
async function sendTurn() {
  const turn = new AssistantTurn(state.model.id);
  const stream = elements.stream.checked;
  const controller = new AbortController();
  state.inFlight = controller;
  setBusy(true);
  let finishReason;
  try {
    const response = await call("/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(requestBody(stream)),
      signal: controller.signal,
    });
    if (!response.ok) {
      const body = await readJson(response);
      turn.showError(body.error ?? { message: `${response.status} ${response.statusText}` });
      return false;
    }
    if (stream) {
      for await (const data of serverSentData(response)) {
        if (data === "[DONE]") break;
        const chunk = JSON.parse(data);
        if (chunk.error) {
          turn.showError(chunk.error);
          return false;
        }
        const event = chunk.graph_chat_serve?.event;
        if (event) turn.showEvent(event);
        for (const choice of chunk.choices ?? []) {
          if (choice.delta?.reasoning_content) turn.appendReasoning(choice.delta.reasoning_content);
          if (choice.delta?.content) turn.appendText(choice.delta.content);
          if (choice.delta?.tool_calls) turn.mergeToolCalls(choice.delta.tool_calls);
          if (choice.delta?.annotations) turn.showCitations(choice.delta.annotations);
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
        if (chunk.usage) turn.showUsage(chunk.usage);
      }
    } else {
      const completion = await response.json();
      const choice = completion.choices[0];
      if (choice.message.reasoning_content) turn.appendReasoning(choice.message.reasoning_content);
      if (choice.message.content) turn.appendText(choice.message.content);
      if (choice.message.tool_calls) turn.mergeToolCalls(choice.message.tool_calls.map((call, index) => ({ index, ...call })));
      turn.showCitations(choice.message.annotations);
      turn.showUsage(completion.usage);
      finishReason = choice.finish_reason;
    }
    const assistant = { role: "assistant", content: turn.text === "" ? null : turn.text };
    if (turn.toolCalls.length > 0) assistant.tool_calls = turn.toolCalls;
    state.messages.push(assistant);
    if (turn.toolCalls.length > 0) showToolCalls(turn);
    return true;
  } catch (error) {
    if (controller.signal.aborted) turn.showStopped();
    else turn.showError({ message: error instanceof Error ? error.message : String(error) });
    return false;
  } finally {
    turn.finish(finishReason);
    if (state.inFlight === controller) state.inFlight = undefined;
    setBusy(false);
  }
}

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
function showToolCalls(turn) {
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
    const pending = state.messages.length;
    const given = answers.map((entry) => {
      const text = entry.answer.value;
      const interrupt = entry.call.function.name === INTERRUPT_TOOL;
      const value = entry.value !== undefined ? entry.value : interrupt ? parseOr(text, text) : text;
      return { entry, value, content: interrupt ? JSON.stringify({ resume: value }) : String(value) };
    });
    for (const { entry, content } of given) state.messages.push({ role: "tool", tool_call_id: entry.call.id, content });
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
    state.messages.length = pending;
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

/** While tool calls wait for their answers, the composer waits too: a new message would leave them unanswered. */
function setAwaitingAnswer(waiting) {
  state.awaitingAnswer = waiting;
  elements.prompt.disabled = waiting;
  elements.prompt.placeholder = waiting
    ? "Answer the question above first (or start a new conversation)"
    : "Write a message; Enter sends, Shift+Enter adds a line";
  setBusy(state.inFlight !== undefined);
}

function setBusy(busy) {
  elements.send.disabled = busy || state.model === undefined || state.awaitingAnswer;
  elements.stop.hidden = !busy;
  elements.model.disabled = busy;
}

// ---- wiring -------------------------------------------------------------------------------

elements.composer.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = elements.prompt.value.trim();
  if (text === "" || state.inFlight !== undefined || state.model === undefined || state.awaitingAnswer) return;
  elements.prompt.value = "";
  const item = addUserTurn(text);
  state.messages.push({ role: "user", content: text });
  const before = state.messages.length - 1;
  if (!(await sendTurn())) {
    // A failed or stopped request leaves the conversation as it was before it.
    state.messages.length = before;
    item.classList.add("unsent");
  }
});
elements.prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    elements.composer.requestSubmit();
  }
});
elements.stop.addEventListener("click", () => state.inFlight?.abort());
elements.newChat.addEventListener("click", resetConversation);
elements.model.addEventListener("change", () => void selectModel(elements.model.value).catch(showPageError));
elements.settingsReset.addEventListener("click", () => fillSettings(state.model?.graph_chat_serve?.client_settings?.defaults ?? {}));

function showPageError(error) {
  const item = node("li", "turn system");
  item.append(node("div", "error", error instanceof Error ? error.message : String(error)));
  elements.transcript.append(item);
}

elements.apiKey.value = sessionStorage.getItem("chat-serve-api-key") ?? "";
elements.apiKey.addEventListener("change", () => {
  sessionStorage.setItem("chat-serve-api-key", elements.apiKey.value.trim());
  elements.transcript.replaceChildren();
  loadModels().catch(showPageError);
});
loadModels().catch(showPageError);
