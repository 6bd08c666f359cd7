import { useStream } from "@langchain/react";
import { assistantId, ChatView, mount } from "./chat-view.jsx";

// The same page with `useStream` from `@langchain/react` (protocol v2: commands and a thread's
// event stream): an interrupt answered with `respond()`.

function App() {
  const stream = useStream({ apiUrl: location.origin, assistantId });
  return (
    <ChatView
      messages={stream.messages}
      interrupted={stream.interrupt !== undefined}
      question={stream.interrupt?.value?.question ?? stream.interrupt?.payload?.question}
      onApprove={() => void stream.respond("approve")}
      loading={stream.isLoading}
      error={stream.error ?? undefined}
      onSend={(draft) => void stream.submit({ messages: [{ type: "human", content: draft }] })}
    />
  );
}

mount(App);
