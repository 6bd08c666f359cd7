import type { ClientEventWire } from "../wire/response.js";

/** What a tool's automatic statuses say: the start text alone, or each of its three texts. */
export type ToolEventText = string | { start?: string; end?: string; failed?: string };

/**
 * A model's automatic tool statuses: `true` for every tool with the default texts, or per tool
 * its texts (a tool not listed gets the defaults) or `false` to leave that tool out.
 */
export type ToolEventsSetting = boolean | Record<string, ToolEventText | false>;

/** One part of LangGraph's `tools` stream mode. */
interface ToolStreamPart {
  event?: unknown;
  toolCallId?: unknown;
  name?: unknown;
}

interface OpenTool {
  namespace: string[];
  description: string;
}

/** The graph's namespace as client events name it: node names, without LangGraph's task ids. */
function nodeNames(namespace: readonly string[]): string[] {
  return namespace.map((segment) => segment.split(":")[0] ?? segment);
}

function status(namespace: string[], description: string, done: boolean, hidden = false): ClientEventWire {
  return { type: "status", namespace, data: { description, done, hidden } };
}

/** The name LangGraph's `tools` stream gives a tool that reported none. */
const UNNAMED = "unknown";

/**
 * Turns LangGraph's tool lifecycle (the `tools` stream mode, tools of nested subgraphs included)
 * into status events: "Calling get_weather" when a tool starts, a `done` status when it ends or
 * fails. A tool left running when the run stops (an interrupt raised inside it) has its status
 * removed (`hidden`), since it is neither done nor failed; it starts again on the resume.
 */
export class ToolStatusEvents {
  readonly #setting: ToolEventsSetting;
  readonly #open = new Map<string, OpenTool>();
  #unnamed = 0;

  constructor(setting: ToolEventsSetting) {
    this.#setting = setting;
  }

  #texts(name: string): { start: string; end: string; failed: string } | undefined {
    const own = this.#setting === true || this.#setting === false ? undefined : this.#setting[name];
    if (own === false) return undefined;
    const texts = typeof own === "string" ? { start: own } : (own ?? {});
    // LangGraph names a tool "unknown" when its callbacks say no run name (some integrations' tools).
    const shown = name === UNNAMED ? "a tool" : name;
    return {
      start: texts.start ?? `Calling ${shown}`,
      end: texts.end ?? `Called ${shown}`,
      failed: texts.failed ?? `${name === UNNAMED ? "A tool" : name} failed`,
    };
  }

  /** The status a `tools` stream part makes, if any. */
  fromPart(namespace: readonly string[], part: unknown): ClientEventWire | undefined {
    if (this.#setting === false || typeof part !== "object" || part === null) return undefined;
    const { event, toolCallId, name } = part as ToolStreamPart;
    if (typeof name !== "string" || name === "") return undefined;
    const texts = this.#texts(name);
    if (texts === undefined) return undefined;
    const where = nodeNames(namespace);
    const key = typeof toolCallId === "string" ? toolCallId : `${where.join("/")}|${name}`;
    if (event === "on_tool_start") {
      this.#open.set(this.#open.has(key) ? `${key}#${++this.#unnamed}` : key, { namespace: where, description: texts.start });
      return status(where, texts.start, false);
    }
    if (event === "on_tool_end" || event === "on_tool_error") {
      this.#open.delete(key);
      return status(where, event === "on_tool_end" ? texts.end : texts.failed, true);
    }
    return undefined;
  }

  /** Removes the statuses of tools still running when the run stopped (an interrupt inside them). */
  closeOpen(): ClientEventWire[] {
    const left = [...this.#open.values()].map((tool) => status(tool.namespace, tool.description, true, true));
    this.#open.clear();
    return left;
  }
}
