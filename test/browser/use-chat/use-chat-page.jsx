import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";

// A chat page as an AI SDK app writes it, with no server code of its own: useChat straight to
// chat-serve's UI message stream. The model is `?model=`; a graph's pause is a
// `graph_interrupt` tool part, answered with addToolOutput (the chat then sends itself).

const model = new URLSearchParams(location.search).get("model") ?? "memory";

const textOf = (message) => message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");

function App() {
  const [draft, setDraft] = useState("");
  const { messages, sendMessage, addToolOutput, status, error } = useChat({
    transport: new DefaultChatTransport({ api: `/v1/ai-sdk/${model}` }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  });
  const pause = messages.at(-1)?.parts.find((part) => part.type === "tool-graph_interrupt" && part.state === "input-available");
  const progress = messages.at(-1)?.parts.filter((part) => part.type === "data-status") ?? [];
  return (
    <main>
      <ol id="messages">
        {messages.map((message) => (
          <li key={message.id} className={message.role}>
            {textOf(message)}
          </li>
        ))}
      </ol>
      {progress.map((part) => (
        <p key={part.id} className="event">
          {part.data.description}
        </p>
      ))}
      {pause !== undefined && (
        <div id="interrupt">
          <p id="question">{pause.input.payload.question}</p>
          <button
            id="approve"
            type="button"
            onClick={() => addToolOutput({ tool: "graph_interrupt", toolCallId: pause.toolCallId, output: "approve" })}
          >
            Approve
          </button>
        </div>
      )}
      <p id="status">{status === "ready" || status === "error" ? "idle" : status}</p>
      {error != null && <p id="error">{String(error)}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          sendMessage({ text: draft });
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
