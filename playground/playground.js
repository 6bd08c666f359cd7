// The chat-serve playground: a plain OpenAI client in the browser, with no build step and no
// dependencies. It reads the models from `{prefix}/models`, builds a settings form from each
// model's client-settings JSON Schema and talks to `{prefix}/chat/completions`, showing what
// chat-serve adds to the wire: status, progress and artifact events, citations, usage,
// interrupts (answered here to resume the run) and tool calls.

import { showDiagram } from "./diagram.js";
import { node, parseOr, scrollToEnd } from "./dom.js";
import { showToolCalls } from "./tool-calls.js";
import { AssistantTurn } from "./turn.js";

const api = document.documentElement.dataset.api ?? "";

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
  void showDiagram(id, { call, elements, isShown: (shown) => state.model?.id === shown });
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
    if (turn.toolCalls.length > 0) showToolCalls(turn, { messages: state.messages, sendTurn, setAwaitingAnswer });
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
