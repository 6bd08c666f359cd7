/**
 * Chat UIs ask the model they chat with for small tasks of their own: a title for the chat,
 * tags, follow-up questions. Open WebUI's task prompts begin with `### Task:`. Running a graph
 * for them costs a run and may start an interrupt; the `chat-ui` profile answers them at once,
 * in the JSON shape the UI parses.
 */
const TASK_PROMPT = /^\s*###\s*Task:/u;

/** The first words of the chat's first user message, from the `<chat_history>` the prompt quotes. */
function titleFrom(prompt: string): string {
  const history = /<chat_history>([\s\S]*?)<\/chat_history>/u.exec(prompt)?.[1] ?? "";
  const firstUser = /USER:\s*(.+)/u.exec(history)?.[1] ?? "New chat";
  const words = firstUser
    .replace(/[`*_#>[\]]/gu, "")
    .trim()
    .split(/\s+/u)
    .slice(0, 6)
    .join(" ");
  return words === "" ? "New chat" : words;
}

/** The fixed answer to a UI task prompt, or undefined for an ordinary message. */
export function taskReply(text: string): string | undefined {
  if (!TASK_PROMPT.test(text)) return undefined;
  const task = text.slice(0, 400).toLowerCase();
  if (task.includes("title")) return JSON.stringify({ title: titleFrom(text) });
  if (task.includes("tags")) return JSON.stringify({ tags: ["General"] });
  if (task.includes("follow-up") || task.includes("follow_up") || task.includes("follow up")) return JSON.stringify({ follow_ups: [] });
  if (task.includes("search quer") || task.includes("queries")) return JSON.stringify({ queries: [] });
  return "";
}
