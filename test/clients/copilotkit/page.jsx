import { CopilotKit, useLangGraphInterrupt } from "@copilotkit/react-core";
import { CopilotChat } from "@copilotkit/react-ui";
import "@copilotkit/react-ui/styles.css";
import { createRoot } from "react-dom/client";

// A CopilotKit app as its docs build one: the provider pointed at a Copilot Runtime, its chat,
// and a LangGraph interrupt shown with an Approve button (`useLangGraphInterrupt`). The agent
// comes from `?agent=`: a LangGraph agent on the Agent Protocol, or an AG-UI `HttpAgent`.

const agent = new URLSearchParams(location.search).get("agent") ?? "memory";

function Approval() {
  useLangGraphInterrupt({
    render: ({ event, resolve }) => (
      <div id="interrupt">
        {/* A LangGraph agent hands over the interrupt's value; AG-UI's standard interrupt, its message. */}
        <p id="question">{event.value?.question ?? event.value?.message}</p>
        <button id="approve" type="button" onClick={() => resolve("approve")}>
          Approve
        </button>
      </div>
    ),
  });
  return null;
}

createRoot(document.getElementById("root")).render(
  <CopilotKit runtimeUrl="/copilotkit" agent={agent} showDevConsole={false} enableInspector={false}>
    <Approval />
    <CopilotChat />
  </CopilotKit>,
);
