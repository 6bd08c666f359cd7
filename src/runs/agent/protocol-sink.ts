import type { ThreadLog } from "./protocol-log.js";

/** An event of `streamEvents(…, { version: "v3" })`, as a protocol run hands it over. */
export interface RunProtocolEvent {
  method: string;
  params: { namespace: string[]; node?: string; data: unknown };
}

/** How a protocol run ended, as the engine says it. */
export interface ProtocolRunEnd {
  status: "success" | "error" | "interrupted" | "pending" | "running";
  interrupted: boolean;
  failure: string | null;
}

/** Where a protocol run sends its events: its thread's log, in the protocol's terms. */
export interface ProtocolSink {
  /** The run's root `running`: once it starts, or at its first event if that comes sooner. */
  open(): void;
  event(event: RunProtocolEvent): void;
  /** The root's last lifecycle event; then what was pushed is written. */
  ended(end: ProtocolRunEnd): Promise<void>;
  /** A run that goes on elsewhere (handed back, lost): what it pushed is written, no end is said. */
  leave(): Promise<void>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** `{ id, value }` interrupts as the protocol's `input.requested` data. */
export function inputRequests(value: unknown): { interrupt_id: string; payload: unknown }[] {
  const list = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.__interrupt__) ? value.__interrupt__ : [];
  return list.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.id === "string" ? [{ interrupt_id: entry.id, payload: entry.value }] : [],
  );
}

/**
 * A protocol run's v3 events as its thread's protocol events: the root lifecycle is the
 * sink's own (it knows how the run ended and what it waits on), each interrupt is announced
 * once on `input.requested`, subgraph lifecycles and every other channel go through.
 */
export function protocolSink(log: ThreadLog, graphName: string): ProtocolSink {
  const release = log.hold();
  /** Interrupts already announced, so a later `values` does not repeat them. */
  const announced = new Set<string>();
  let opened = false;
  const open = () => {
    if (opened) return;
    opened = true;
    log.push("lifecycle", [], { event: "running", graph_name: graphName });
  };
  const announce = (namespace: string[], value: unknown) => {
    for (const request of inputRequests(value)) {
      if (announced.has(request.interrupt_id)) continue;
      announced.add(request.interrupt_id);
      log.push("input", namespace, request);
    }
  };
  const written = async () => {
    try {
      await log.flush();
    } finally {
      release();
    }
  };
  return {
    open,
    event: ({ method, params }) => {
      open();
      const { namespace, data } = params;
      switch (method) {
        case "lifecycle":
          // The root's lifecycle is the sink's.
          if (namespace.length > 0) log.push("lifecycle", namespace, data);
          return;
        case "values": {
          if (isRecord(data) && "__interrupt__" in data) {
            announce(namespace, data.__interrupt__);
            const { __interrupt__: _, ...rest } = data;
            if (Object.keys(rest).length > 0) log.push("values", namespace, rest);
            return;
          }
          log.push("values", namespace, data);
          return;
        }
        case "updates": {
          const update = isRecord(data) ? data : {};
          if (update.node === "__interrupt__") announce(namespace, update.values);
          else log.push("updates", namespace, update.values, typeof update.node === "string" ? update.node : params.node);
          return;
        }
        default:
          if (method.startsWith("custom:")) log.push("custom", namespace, { name: method.slice("custom:".length), payload: data });
          else log.push(method, namespace, data, params.node);
      }
    },
    ended: async ({ status, interrupted, failure }) => {
      open();
      const event =
        status === "error" ? "failed" : status === "interrupted" || interrupted || announced.size > 0 ? "interrupted" : "completed";
      log.push("lifecycle", [], { event, graph_name: graphName, ...(failure === null ? {} : { error: failure }) });
      await written();
    },
    leave: written,
  };
}
