import { useStream } from "@langchain/langgraph-sdk/react";
import { LoadExternalComponent } from "@langchain/langgraph-sdk/react-ui";
import { useState } from "react";
import { createRoot } from "react-dom/client";

// agent-chat-ui's way with a graph's generative UI (components/thread/messages/ai.tsx): each AI
// message shows the UI messages the graph pushed for it through LoadExternalComponent, which
// asks the server for the graph's bundle (POST /ui/{graph}) and renders it in a shadow root.

function App() {
  const stream = useStream({ apiUrl: location.origin, assistantId: "agent" });
  const [text, setText] = useState("");
  const ui = stream.values?.ui ?? [];
  return (
    <>
      <input id="prompt" value={text} onChange={(event) => setText(event.target.value)} />
      <button
        id="send"
        type="button"
        onClick={() => {
          stream.submit({ messages: [{ type: "human", content: text }] });
          setText("");
        }}
      >
        Send
      </button>
      <p id="status">{stream.isLoading ? "running" : "idle"}</p>
      <ul id="messages">
        {stream.messages.map((message) => (
          <li key={message.id} className={message.type}>
            <span>{typeof message.content === "string" ? message.content : ""}</span>
            {ui
              .filter((item) => item.metadata?.id === message.id || item.metadata?.message_id === message.id)
              .map((item) => (
                <LoadExternalComponent key={item.id} className="generative" stream={stream} message={item} fallback={<em>loading…</em>} />
              ))}
          </li>
        ))}
      </ul>
    </>
  );
}

createRoot(document.getElementById("root")).render(<App />);
