import { useMessageMetadata, useStream } from "@langchain/react";
import { assistantId, ChatView, mount } from "./chat-view.jsx";

// `@langchain/react` (protocol v2) forking from a message, as its docs show it: each answer
// knows the checkpoint it was first seen on (`useMessageMetadata`), and "Regenerate" is a run
// forked from there (`submit(null, { forkFrom })`).

function Regenerate({ stream, message }) {
  const fork = useMessageMetadata(stream, message.id)?.parentCheckpointId;
  if (!fork) return null;
  return (
    <button type="button" id="regenerate" data-fork={fork} onClick={() => void stream.submit(null, { forkFrom: fork })}>
      Regenerate
    </button>
  );
}

function App() {
  const stream = useStream({ apiUrl: location.origin, assistantId });
  const last = stream.messages.at(-1);
  return (
    <>
      <ChatView
        messages={stream.messages}
        interrupted={false}
        loading={stream.isLoading}
        error={stream.error ?? undefined}
        onSend={(draft) => void stream.submit({ messages: [{ type: "human", content: draft }] })}
      />
      {last?.type === "ai" && !stream.isLoading && <Regenerate stream={stream} message={last} />}
    </>
  );
}

mount(App);
