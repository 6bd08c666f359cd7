import { InvalidResumeError } from "../../errors/catalogue.js";

// LangGraph's Agent Inbox interrupts: a graph asks `interrupt([{ action_request: { action, args },
// config: { allow_accept, allow_edit, allow_respond, allow_ignore }, description }])` and expects
// `[{ type: "accept" | "edit" | "response" | "ignore", args }]` back. Every surface that asks a
// person in words or in a form (chat completions, Responses, Messages, A2A, MCP's elicitation)
// reads the request here and turns the person's answer into that response.

/** One Agent Inbox request (`HumanInterrupt` of `@langchain/langgraph/prebuilt`). */
export interface HumanInterrupt {
  action_request: { action: string; args: Record<string, unknown> };
  config: { allow_accept: boolean; allow_edit: boolean; allow_respond: boolean; allow_ignore: boolean };
  description?: string;
}

/** The answer an Agent Inbox graph reads (`HumanResponse`). */
export interface HumanResponse {
  type: "accept" | "edit" | "response" | "ignore";
  args: null | string | { action: string; args: Record<string, unknown> };
}

/** What a person may answer, in the words the forms and the questions use. */
type Choice = "accept" | "edit" | "respond" | "ignore";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The Agent Inbox request an interrupt's payload is (alone, or the only one of a list), or undefined. */
export function agentInboxRequest(payload: unknown): HumanInterrupt | undefined {
  const candidate = Array.isArray(payload) && payload.length === 1 ? payload[0] : payload;
  if (!isRecord(candidate) || !isRecord(candidate.action_request) || !isRecord(candidate.config)) return undefined;
  const { action, args } = candidate.action_request;
  if (typeof action !== "string" || !isRecord(args)) return undefined;
  return candidate as unknown as HumanInterrupt;
}

/** The answers the request allows, in the order a person reads them. */
export function allowedChoices(request: HumanInterrupt): Choice[] {
  const { config } = request;
  return (
    [
      ["accept", config.allow_accept],
      ["edit", config.allow_edit],
      ["respond", config.allow_respond],
      ["ignore", config.allow_ignore],
    ] as const
  )
    .filter(([, allowed]) => allowed === true)
    .map(([choice]) => choice);
}

/** The request as a question a person reads: what the agent wants to do, with what, and how to answer. */
export function inboxQuestion(request: HumanInterrupt): string {
  const { action, args } = request.action_request;
  const asked = request.description?.trim() || `The agent wants to run ${action}.`;
  const choices = allowedChoices(request);
  const how = [
    choices.includes("accept") ? "'accept' to go ahead" : undefined,
    choices.includes("edit") ? `an edit of the arguments as JSON (${JSON.stringify(args)})` : undefined,
    choices.includes("respond") ? "any other text as your response" : undefined,
    choices.includes("ignore") ? "'ignore' to skip it" : undefined,
  ].filter((part): part is string => part !== undefined);
  return `${asked}\n${action} ${JSON.stringify(args)}\nAnswer with ${how.join(", ")}.`;
}

function refuse(request: HumanInterrupt, what: string): never {
  throw new InvalidResumeError(`${what}: this question takes ${allowedChoices(request).join(", ")}.`);
}

/** An answer that is a `HumanResponse` (or a list of them) already: checked against what the request allows. */
function asResponses(request: HumanInterrupt, value: unknown): HumanResponse[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  const types = new Set(["accept", "edit", "response", "ignore"]);
  if (list.length === 0 || !list.every((item) => isRecord(item) && typeof item.type === "string" && types.has(item.type))) return undefined;
  for (const item of list as HumanResponse[]) {
    const choice: Choice = item.type === "response" ? "respond" : item.type;
    if (!allowedChoices(request).includes(choice)) refuse(request, `'${item.type}' is not allowed here`);
  }
  return list as HumanResponse[];
}

/** An edit's arguments: the request's own, with what the person changed (a form's `args_<name>` fields, or an object). */
function editedArgs(request: HumanInterrupt, changes: Record<string, unknown>): Record<string, unknown> {
  const edited: Record<string, unknown> = { ...request.action_request.args };
  for (const [key, value] of Object.entries(changes)) {
    const name = key.startsWith("args_") ? key.slice("args_".length) : key;
    // A field left empty (or not sent) keeps the argument as it was.
    if (!Object.hasOwn(request.action_request.args, name) || value === "" || value === undefined || value === null) continue;
    const before = request.action_request.args[name];
    // A form gives text: an argument that was not text takes the JSON the person wrote, when it is JSON.
    if (typeof value === "string" && typeof before !== "string") {
      try {
        edited[name] = JSON.parse(value);
        continue;
      } catch {
        // Not JSON: the text as it is.
      }
    }
    edited[name] = value;
  }
  return edited;
}

/**
 * The `HumanResponse[]` a person's answer to an Agent Inbox request means: a response (or
 * list) as the graph reads it; a form's `{ response_type, response, args_<name>… }`; or words
 * ("accept", "ignore", an edit as a JSON object of arguments, any other text as a response).
 * An answer the request does not allow is refused, naming what it allows.
 */
export function humanResponsesFor(request: HumanInterrupt, value: unknown): HumanResponse[] {
  const given = asResponses(request, value);
  if (given !== undefined) return given;
  const choices = allowedChoices(request);
  const { action } = request.action_request;
  if (isRecord(value) && typeof value.response_type === "string") {
    const choice = value.response_type as Choice;
    if (!choices.includes(choice)) refuse(request, `'${value.response_type}' is not allowed here`);
    if (choice === "accept") return [{ type: "accept", args: null }];
    if (choice === "ignore") return [{ type: "ignore", args: null }];
    if (choice === "respond") return [{ type: "response", args: typeof value.response === "string" ? value.response : "" }];
    return [{ type: "edit", args: { action, args: editedArgs(request, value) } }];
  }
  if (typeof value !== "string") {
    if (isRecord(value) && choices.includes("edit")) return [{ type: "edit", args: { action, args: editedArgs(request, value) } }];
    return refuse(request, "That answer is not one this question reads");
  }
  const text = value.trim();
  const word = text.toLowerCase().replace(/[.!]+$/u, "");
  if (["accept", "approve", "approved", "yes", "y", "ok", "go ahead"].includes(word) && choices.includes("accept")) {
    return [{ type: "accept", args: null }];
  }
  if (["ignore", "skip", "dismiss"].includes(word) && choices.includes("ignore")) return [{ type: "ignore", args: null }];
  if (text.startsWith("{") || text.startsWith("[")) {
    try {
      return humanResponsesFor(request, JSON.parse(text));
    } catch (error) {
      if (error instanceof InvalidResumeError) throw error;
      // Not JSON: read as words below.
    }
  }
  if (choices.includes("respond")) return [{ type: "response", args: text }];
  return refuse(request, `'${text.slice(0, 80)}' is not an answer this question takes`);
}
