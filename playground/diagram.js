// The selected model's graph: LangGraph's Mermaid drawing, rendered by the optional `mermaid`
// package this server serves (never a CDN), or shown as its source.

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
export async function showDiagram(id, { call, elements, isShown }) {
  elements.diagram.hidden = true;
  elements.drawing.replaceChildren();
  elements.diagramHint.hidden = true;
  const response = await call(`/playground/graph/${encodeURIComponent(id)}`);
  if (!response.ok || !isShown(id)) return;
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
    if (isShown(id)) elements.drawing.innerHTML = svg;
  } catch (error) {
    elements.diagramHint.textContent = `The diagram could not be drawn: ${error instanceof Error ? error.message : String(error)}`;
    elements.diagramHint.hidden = false;
  }
}
