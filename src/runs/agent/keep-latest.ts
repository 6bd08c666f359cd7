import { MemorySaver } from "@langchain/langgraph";
import { DeadlinePostgresSaver } from "../../coordination/deadline-postgres-saver.js";

/** Metadata a checkpoint of a graph with delta channels carries: their values are rebuilt from the checkpoints before. */
const DELTA_COUNTERS = "counters_since_delta_snapshot";

type Tuple = { metadata?: Record<string, unknown> };
type Saver = { getTuple?(config: { configurable: { thread_id: string } }): Promise<Tuple | undefined> };

/**
 * Cuts a thread's checkpoints to the latest of each namespace (`checkpointer.ttl`'s
 * `keep_latest`), with the pending writes only the others held: its state and pending
 * interrupts stay, its history goes. True when done; false when the checkpointer is neither
 * LangGraph's `MemorySaver` nor chat-serve's Postgres saver, or the graph keeps delta channels,
 * whose values are rebuilt from the checkpoints before (the thread then keeps them all).
 */
export async function keepLatestCheckpoints(checkpointer: unknown, threadId: string): Promise<boolean> {
  if (!(checkpointer instanceof MemorySaver) && !(checkpointer instanceof DeadlinePostgresSaver)) return false;
  const latest = await (checkpointer as Saver).getTuple?.({ configurable: { thread_id: threadId } });
  if (latest === undefined) return true;
  if (latest.metadata !== undefined && DELTA_COUNTERS in latest.metadata) return false;
  if (checkpointer instanceof DeadlinePostgresSaver) {
    await checkpointer.keepLatest(threadId);
    return true;
  }
  const namespaces = checkpointer.storage[threadId] ?? {};
  const kept = new Set<string>();
  for (const [namespace, checkpoints] of Object.entries(namespaces)) {
    // Checkpoint ids sort in the order they were made, as the saver itself reads its latest.
    const [newest, ...older] = Object.keys(checkpoints).sort().reverse();
    if (newest === undefined) continue;
    kept.add(JSON.stringify([threadId, namespace, newest]));
    for (const id of older) delete checkpoints[id];
  }
  for (const key of Object.keys(checkpointer.writes)) {
    const [owner] = JSON.parse(key) as [string];
    if (owner === threadId && !kept.has(key)) delete checkpointer.writes[key];
  }
  return true;
}
