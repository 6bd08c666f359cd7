// The view of one assistant answer in the transcript.

import { node, safeLink, scrollToEnd } from "./dom.js";

/** The view of one assistant answer, filled in as the stream arrives. */
export class AssistantTurn {
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
    document.getElementById("transcript").append(this.item);
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
