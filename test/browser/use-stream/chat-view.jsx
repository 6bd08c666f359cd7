import { useState } from "react";
import { createRoot } from "react-dom/client";

// The chat page both `useStream` pages render: messages as they stream, an interrupt's question
// with an Approve button, the loading state, an error, and a prompt.

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block) => (typeof block === "string" ? block : (block.text ?? ""))).join("");
  return JSON.stringify(content);
}

/** The model the page talks to: `?assistant=`. */
export const assistantId = new URLSearchParams(location.search).get("assistant") ?? "memory";

export function ChatView({ messages, question, interrupted, onApprove, loading, error, onSend }) {
  const [draft, setDraft] = useState("");
  return (
    <main>
      <ol id="messages">
        {messages.map((message, index) => (
          <li key={message.id ?? index} className={message.type ?? message._getType?.()}>
            {text(message.content)}
          </li>
        ))}
      </ol>
      {interrupted && (
        <div id="interrupt">
          <p id="question">{question}</p>
          <button id="approve" type="button" onClick={onApprove}>
            Approve
          </button>
        </div>
      )}
      <p id="status">{loading ? "loading" : "idle"}</p>
      {error != null && <p id="error">{String(error)}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          onSend(draft);
          setDraft("");
        }}
      >
        <input id="prompt" value={draft} onChange={(event) => setDraft(event.target.value)} />
        <button id="send" type="submit">
          Send
        </button>
      </form>
    </main>
  );
}

/** Renders the page's app into `#root`. */
export function mount(App) {
  createRoot(document.getElementById("root")).render(<App />);
}
