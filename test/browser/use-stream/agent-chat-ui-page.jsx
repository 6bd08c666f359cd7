import { Client } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { useCallback, useEffect, useState } from "react";
import { assistantId, ChatView, mount } from "./chat-view.jsx";

// A page making agent-chat-ui's calls, as its production build makes them (src/providers/Stream.tsx,
// Thread.tsx, components/thread/index.tsx, agent-inbox): `GET /info` first; `useStream` with the
// thread in the URL and `fetchStateHistory`; a message sent as content blocks with
// `{ messages, context }` and `streamMode: ["values"]`, subgraphs and resumable streams; an
// interrupt answered with `submit({}, { command: { resume } })`; the sidebar's thread list by
// `threads.search({ metadata: { graph_id } })`, fetched again when a thread is created.

const apiUrl = location.origin;

function App() {
  const [threadId, setThreadId] = useState(null);
  const [threads, setThreads] = useState([]);
  const [ready, setReady] = useState(false);
  const getThreads = useCallback(() => new Client({ apiUrl }).threads.search({ metadata: { graph_id: assistantId }, limit: 100 }), []);
  useEffect(() => {
    fetch(`${apiUrl}/info`).then((response) => setReady(response.ok));
  }, []);
  const stream = useStream({
    apiUrl,
    assistantId,
    threadId,
    fetchStateHistory: true,
    onThreadId: (id) => {
      setThreadId(id);
      // agent-chat-ui waits 4 s for the run to start (it names the graph in the thread's metadata).
      setTimeout(() => getThreads().then(setThreads), 1_000);
    },
  });
  return (
    <>
      <p id="ready">{ready ? "ready" : "checking"}</p>
      <ul id="threads">
        {threads.map((thread) => (
          <li key={thread.thread_id}>{thread.thread_id}</li>
        ))}
      </ul>
      <ChatView
        messages={stream.messages}
        interrupted={stream.interrupt !== undefined}
        question={stream.interrupt?.value?.question}
        onApprove={() => stream.submit({}, { command: { resume: "approve" } })}
        loading={stream.isLoading}
        error={stream.error ?? undefined}
        onSend={(draft) => {
          const message = { id: crypto.randomUUID(), type: "human", content: [{ type: "text", text: draft }] };
          stream.submit(
            { messages: [message], context: undefined },
            {
              streamMode: ["values"],
              streamSubgraphs: true,
              streamResumable: true,
              optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), message] }),
            },
          );
        }}
      />
      <p id="thread">{threadId ?? ""}</p>
    </>
  );
}

mount(App);
