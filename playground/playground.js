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
  const url = new URL(location.href);
  url.searchParams.set("model", id);
  history.replaceState(null, "", url);
  resetConversation();
  elements.send.disabled = false;
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
    if (this.text === "" && this.toolCalls.length === 0 && !this.item.classList.contains("failed")) this.content.textContent = "(no text)";
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
async function send() {
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
    turn.showError(
      controller.signal.aborted ? { message: "stopped" } : { message: error instanceof Error ? error.message : String(error) },
    );
    return false;
  } finally {
    turn.finish(finishReason);
    if (state.inFlight === controller) state.inFlight = undefined;
    setBusy(false);
  }
}

/**
 * Tool calls wait for an answer: an interrupt shows its payload, another tool its arguments,
 * and the answers go back as tool messages, which resumes the run.
 */
function showToolCalls(turn) {
  const answers = [];
  for (const call of turn.toolCalls) {
    const card = node("div", call.function.name === INTERRUPT_TOOL ? "tool-call interrupt" : "tool-call");
    const args = parseOr(call.function.arguments, call.function.arguments);
    if (call.function.name === INTERRUPT_TOOL) {
      card.append(node("div", "call-title", "The graph is waiting for your answer"));
      card.append(node("pre", "payload", JSON.stringify(args?.payload ?? args, null, 2)));
    } else {
      card.append(node("div", "call-title", `Tool call: ${call.function.name}`));
      card.append(node("pre", "payload", typeof args === "string" ? args : JSON.stringify(args, null, 2)));
    }
    const answer = document.createElement("textarea");
    answer.className = "answer";
    answer.rows = 2;
    answer.placeholder =
      call.function.name === INTERRUPT_TOOL
        ? "Your answer: text, or JSON for a structured resume value"
        : `The result of ${call.function.name}`;
    card.append(answer);
    turn.calls.append(card);
    answers.push({ call, answer });
  }
  const submit = node("button", "answer-send", answers.length === 1 ? "Send answer" : "Send answers");
  submit.type = "button";
  submit.addEventListener("click", async () => {
    const pending = state.messages.length;
    for (const { call, answer } of answers) {
      const text = answer.value;
      const content = call.function.name === INTERRUPT_TOOL ? JSON.stringify({ resume: parseOr(text, text) }) : text;
      state.messages.push({ role: "tool", tool_call_id: call.id, content });
    }
    submit.disabled = true;
    for (const { answer } of answers) answer.disabled = true;
    const sent = await send();
    if (!sent) {
      // Let the person try again with another answer.
      state.messages.length = pending;
      submit.disabled = false;
      for (const { answer } of answers) answer.disabled = false;
    }
  });
  turn.calls.append(submit);
  answers[0]?.answer.focus();
  scrollToEnd();
}

function setBusy(busy) {
  elements.send.disabled = busy || state.model === undefined;
  elements.stop.hidden = !busy;
  elements.model.disabled = busy;
}

// ---- wiring -------------------------------------------------------------------------------

elements.composer.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = elements.prompt.value.trim();
  if (text === "" || state.inFlight !== undefined || state.model === undefined) return;
  elements.prompt.value = "";
  const item = addUserTurn(text);
  state.messages.push({ role: "user", content: text });
  const before = state.messages.length - 1;
  if (!(await send())) {
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
