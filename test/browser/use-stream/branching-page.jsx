import { useStream } from "@langchain/langgraph-sdk/react";
import { useState } from "react";
import { assistantId, mount } from "./chat-view.jsx";

// Branching chat as LangGraph's docs build it with `useStream` (`fetchStateHistory: true`): an
// edit of a human message and a regeneration of an answer are runs from the checkpoint before
// the message (`firstSeenState.parent_checkpoint`), and each forked message offers its branches
// (`branchOptions`, `setBranch`).

function text(content) {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((block) => block.text ?? "").join("") : JSON.stringify(content);
}

function App() {
  const thread = useStream({ apiUrl: location.origin, assistantId, messagesKey: "messages", fetchStateHistory: true });
  const [draft, setDraft] = useState("");
  const [edited, setEdited] = useState("");
  return (
    <main>
      <ol id="messages">
        {thread.messages.map((message, index) => {
          const meta = thread.getMessagesMetadata(message, index);
          const parent = meta?.firstSeenState?.parent_checkpoint;
          const options = meta?.branchOptions ?? [];
          const at = options.indexOf(meta?.branch);
          return (
            <li key={message.id ?? index} className={message.type} data-id={message.id}>
              <span className="text">{text(message.content)}</span>
              {message.type === "human" && parent && (
                <button
                  type="button"
                  className="edit"
                  onClick={() => thread.submit({ messages: [{ type: "human", content: edited }] }, { checkpoint: parent })}
                >
                  Edit
                </button>
              )}
              {message.type === "ai" && parent && (
                <button type="button" className="regenerate" onClick={() => thread.submit(undefined, { checkpoint: parent })}>
                  Regenerate
                </button>
              )}
              {options.length > 1 && (
                <span className="branches" data-branch={at + 1} data-count={options.length}>
                  <button type="button" className="previous" onClick={() => thread.setBranch(options[at - 1])} disabled={at <= 0}>
                    Previous
                  </button>
                  <button
                    type="button"
                    className="next"
                    onClick={() => thread.setBranch(options[at + 1])}
                    disabled={at >= options.length - 1}
                  >
                    Next
                  </button>
                </span>
              )}
            </li>
          );
        })}
      </ol>
      <p id="status">{thread.isLoading ? "loading" : "idle"}</p>
      {thread.error != null && <p id="error">{String(thread.error)}</p>}
      <input id="edited" value={edited} onChange={(event) => setEdited(event.target.value)} />
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

mount(App);
