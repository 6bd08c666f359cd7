// The playground's small helpers: elements with text (never HTML), safe links, JSON with a fallback.

/** Creates an element with a class and text; text is always text, never HTML. */
export function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

/** A link only for http(s) URLs; anything else is shown as text. */
export function safeLink(url, label) {
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

export function scrollToEnd() {
  document.getElementById("transcript")?.lastElementChild?.scrollIntoView({ block: "end" });
}

export function parseOr(text, fallback) {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}
