import { useStream } from "@langchain/langgraph-sdk/react";
import { assistantId, ChatView, mount } from "./chat-view.jsx";

// A chat page as LangGraph's docs build one with `useStream` from `@langchain/langgraph-sdk/react`:
// an interrupt answered with `submit(undefined, { command: { resume } })`.

function App() {
  const thread = useStream({ apiUrl: location.origin, assistantId, messagesKey: "messages" });
  return (
    <ChatView
      messages={thread.messages}
      interrupted={thread.interrupt !== undefined}
      question={thread.interrupt?.value?.question}
      onApprove={() => thread.submit(undefined, { command: { resume: "approve" } })}
      loading={thread.isLoading}
      error={thread.error ?? undefined}
      onSend={(draft) => thread.submit({ messages: [{ type: "human", content: draft }] })}
    />
  );
}

mount(App);
