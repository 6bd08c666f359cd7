import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { EventLoopTurns } from "../util/event-loop-turns.js";

/** A checkpointer's serializer, as LangGraph's savers hold it. */
type Serde = BaseCheckpointSaver["serde"];

/** Whether a parsed JSON node is one of LangGraph's records (a LangChain object, an `undefined`, a Set…): they carry `lc`. */
function isRecord(node: Record<string, unknown>): boolean {
  return node.lc === 1 || node.lc === 2;
}

/**
 * A checkpointer's serializer that reads a large checkpoint in turns: LangGraph's own revives a
 * parsed checkpoint in one chain of promise jobs (a state of 10,000 messages held the event loop
 * for 400 ms), so here the plain objects and lists are walked with a turn of the event loop
 * whenever the walk has worked past its budget, and each record LangGraph writes (a message, an
 * `undefined`, a Set) is revived by LangGraph's own serializer, whole: what comes back is what
 * it would have built. Writing is LangGraph's own.
 */
export class SerdeInTurns implements Serde {
  readonly #inner: Serde;

  constructor(inner: Serde) {
    this.#inner = inner;
  }

  dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    return this.#inner.dumpsTyped(value);
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (type !== "json") return this.#inner.loadsTyped(type, data);
    const text = typeof data === "string" ? data : new TextDecoder().decode(data);
    return this.#revive(JSON.parse(text), new EventLoopTurns());
  }

  async #revive(node: unknown, turns: EventLoopTurns): Promise<unknown> {
    const turn = turns.take();
    if (turn !== undefined) await turn;
    if (node === null || typeof node !== "object") return node;
    if (Array.isArray(node)) {
      const revived: unknown[] = [];
      for (const item of node) revived.push(await this.#revive(item, turns));
      return revived;
    }
    const record = node as Record<string, unknown>;
    if (isRecord(record)) return this.#inner.loadsTyped("json", JSON.stringify(record));
    const revived: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) revived[key] = await this.#revive(value, turns);
    return revived;
  }
}
