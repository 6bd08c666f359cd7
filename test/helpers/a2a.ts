import { randomUUID } from "node:crypto";
import { AgentCard, type Message, type Part, Role } from "@a2a-js/sdk";
import { type Client, ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { assertA2a, assertA2aV03 } from "./a2a-spec.js";

/** What a checking fetch saw: how many bodies it validated, and what did not validate. */
export interface WireCheck {
  checked: number;
  failures: string[];
}

/** The 1.0 type of a method's result, and the 0.3 definition of its whole answer. */
const RESULT_1_0: Record<string, string> = {
  SendMessage: "SendMessageResponse",
  SendStreamingMessage: "StreamResponse",
  SubscribeToTask: "StreamResponse",
  GetTask: "Task",
  CancelTask: "Task",
};
const ANSWER_0_3: Record<string, string> = {
  "message/send": "SendMessageResponse",
  "message/stream": "SendStreamingMessageResponse",
  "tasks/resubscribe": "SendStreamingMessageResponse",
  "tasks/get": "GetTaskResponse",
  "tasks/cancel": "CancelTaskResponse",
};

function checkAnswer(check: WireCheck, method: string, answer: Record<string, unknown>): void {
  try {
    if (method in ANSWER_0_3) {
      assertA2aV03(ANSWER_0_3[method]!, answer, method);
    } else if ("error" in answer) {
      const error = answer.error as { code?: unknown; message?: unknown };
      if (!Number.isInteger(error.code) || typeof error.message !== "string") throw new Error(`${method}: a malformed JSON-RPC error`);
    } else {
      const type = RESULT_1_0[method];
      if (type === undefined) throw new Error(`no result type known for ${method}`);
      assertA2a(type, answer.result, `${method} result`);
    }
    check.checked += 1;
  } catch (error) {
    check.failures.push((error as Error).message);
  }
}

/**
 * A fetch that validates every JSON-RPC answer and every streamed event it passes on against
 * the A2A definitions (1.0 proto, or the 0.3 JSON Schema for 0.3 method names).
 */
export function checkingFetch(check: WireCheck): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const method = String((JSON.parse(String(init?.body ?? "{}")) as { method?: unknown }).method ?? "");
    if (method === "") return response;
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const text = await response.text();
      checkAnswer(check, method, JSON.parse(text) as Record<string, unknown>);
      return new Response(text, { status: response.status, headers: response.headers });
    }
    const decoder = new TextDecoder();
    let buffer = "";
    const frames = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          buffer = buffer.slice(end + 2);
          if (data !== "") checkAnswer(check, method, JSON.parse(data) as Record<string, unknown>);
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body!.pipeThrough(frames), { status: response.status, headers: response.headers });
  };
}

/** The SDK's client on a model's card (its base URL ends in `/`, so the card is found under it). */
export async function a2aClient(
  origin: string,
  model: string,
  check: WireCheck,
  options: { headers?: Record<string, string>; version?: "0.3" } = {},
): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) =>
    checkingFetch(check)(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...options.headers } });
  const response = await fetch(`${origin}/v1/a2a/${model}/.well-known/agent-card.json`);
  const json = await response.json();
  assertA2a("AgentCard", json, `${model}'s card`);
  const card = AgentCard.fromJSON(json);
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })] });
  if (options.version === "0.3") {
    // A 0.3 client: the card's 0.3 interface only.
    return factory.createFromAgentCard({
      ...card,
      supportedInterfaces: card.supportedInterfaces.filter((one) => one.protocolVersion === "0.3"),
    });
  }
  return factory.createFromAgentCard(card);
}

export const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });

/** A user's message (to a task, or in a context, when given). */
export function userMessage(parts: Part[] | string, ids: { taskId?: string; contextId?: string } = {}): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: typeof parts === "string" ? [text(parts)] : parts,
    contextId: ids.contextId ?? "",
    taskId: ids.taskId ?? "",
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A JSON-RPC call posted by hand (what no SDK client would send), its answer parsed. */
export async function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const raw = await response.text();
  return { status: response.status, body: raw.startsWith("{") ? JSON.parse(raw) : raw };
}
