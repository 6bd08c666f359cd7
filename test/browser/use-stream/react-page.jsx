import { useStream } from "@langchain/react";
import { useState } from "react";
import { createRoot } from "react-dom/client";

// The same chat page with `useStream` from `@langchain/react` (protocol v2: commands and a
// thread's event stream): the model in `?assistant=`, messages as they stream, an interrupt
// answered with `respond()`.

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block) => (typeof block === "string" ? block : (block.text ?? ""))).join("");
  return JSON.stringify(content);
}

function App() {
  const assistantId = new URLSearchParams(location.search).get("assistant") ?? "memory";
  const [draft, setDraft] = useState("");
  const stream = useStream({ apiUrl: location.origin, assistantId });
  const question = stream.interrupt?.value?.question ?? stream.interrupt?.payload?.question;
  return (
    <main>
      <ol id="messages">
        {stream.messages.map((message, index) => (
          <li key={message.id ?? index} className={message.type ?? message._getType?.()}>
            {text(message.content)}
          </li>
        ))}
      </ol>
      {stream.interrupt !== undefined && (
        <div id="interrupt">
          <p id="question">{question}</p>
          <button id="approve" type="button" onClick={() => void stream.respond("approve")}>
            Approve
          </button>
        </div>
      )}
      <p id="status">{stream.isLoading ? "loading" : "idle"}</p>
      {stream.error != null && <p id="error">{String(stream.error)}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void stream.submit({ messages: [{ type: "human", content: draft }] });
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

createRoot(document.getElementById("root")).render(<App />);
