import { HttpAgent } from "@ag-ui/client";
import { useMemo, useState } from "react";
import { createRoot } from "react-dom/client";

// A chat page on AG-UI's own client, as a frontend without CopilotKit writes it: HttpAgent
// straight to chat-serve's `/v1/ag-ui/{model}`. Messages as they stream; a run that ends with
// the interrupt outcome shows its question, and Approve resumes it.

const model = new URLSearchParams(location.search).get("model") ?? "memory";

const textOf = (content) => (typeof content === "string" ? content : (content ?? []).map((part) => part.text ?? "").join(""));

function App() {
  const agent = useMemo(() => new HttpAgent({ url: `/v1/ag-ui/${model}`, threadId: crypto.randomUUID() }), []);
  const [messages, setMessages] = useState([]);
  const [interrupts, setInterrupts] = useState([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState(null);
  const [draft, setDraft] = useState("");

  const run = async (parameters) => {
    setRunning(true);
    setError(null);
    try {
      await agent.runAgent(parameters, {
        onMessagesChanged: ({ messages: now }) => setMessages([...now]),
      });
      setMessages([...agent.messages]);
      setInterrupts([...agent.pendingInterrupts]);
    } catch (failure) {
      setError(failure);
    } finally {
      setRunning(false);
    }
  };

  return (
    <main>
      <ol id="messages">
        {messages
          .filter((message) => message.role === "user" || message.role === "assistant")
          .map((message) => (
            <li key={message.id} className={message.role}>
              {textOf(message.content)}
            </li>
          ))}
      </ol>
      {interrupts.length > 0 && (
        <div id="interrupt">
          <p id="question">{interrupts[0].message}</p>
          <button
            id="approve"
            type="button"
            onClick={() =>
              run({ resume: interrupts.map((interrupt) => ({ interruptId: interrupt.id, status: "resolved", payload: "approve" })) })
            }
          >
            Approve
          </button>
        </div>
      )}
      <p id="status">{running ? "running" : "idle"}</p>
      {error != null && <p id="error">{String(error)}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          agent.messages.push({ id: crypto.randomUUID(), role: "user", content: draft });
          setMessages([...agent.messages]);
          setDraft("");
          void run({});
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
