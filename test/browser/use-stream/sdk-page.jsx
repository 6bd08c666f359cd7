import { useStream } from "@langchain/langgraph-sdk/react";
import { useState } from "react";
import { createRoot } from "react-dom/client";

// A chat page as LangGraph's docs build one with `useStream` from `@langchain/langgraph-sdk/react`:
// the model in `?assistant=`, messages as they stream, an interrupt answered with a button.

function text(content) {
  return typeof content === "string" ? content : JSON.stringify(content);
}

function App() {
  const assistantId = new URLSearchParams(location.search).get("assistant") ?? "memory";
  const [draft, setDraft] = useState("");
  const thread = useStream({
    apiUrl: location.origin,
    assistantId,
    messagesKey: "messages",
  });
  return (
    <main>
      <ol id="messages">
        {thread.messages.map((message, index) => (
          <li key={message.id ?? index} className={message.type}>
            {text(message.content)}
          </li>
        ))}
      </ol>
      {thread.interrupt !== undefined && (
        <div id="interrupt">
          <p id="question">{thread.interrupt.value?.question}</p>
          <button id="approve" type="button" onClick={() => thread.submit(undefined, { command: { resume: "approve" } })}>
            Approve
          </button>
        </div>
      )}
      <p id="status">{thread.isLoading ? "loading" : "idle"}</p>
      {thread.error !== undefined && thread.error !== null && <p id="error">{String(thread.error)}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          thread.submit({ messages: [{ type: "human", content: draft }] });
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
