// The `debug` stream mode as LangGraph's server writes it (what LangGraph Studio reads): a
// checkpoint event names its checkpoint and its parent's (`checkpoint`, `parent_checkpoint`,
// `parent_config` in snake case), with the config's internal keys and callbacks left out; a
// task names the checkpoint its state is at, not the config.

type Config = { configurable?: Record<string, unknown>; callbacks?: unknown; [key: string]: unknown };

/** A config's checkpoint: thread, namespace, id and map; null for one without a thread. */
function checkpointOf(config: unknown, idRequired: boolean): Record<string, unknown> | null {
  const configurable = (config as Config | undefined)?.configurable;
  if (typeof configurable?.thread_id !== "string") return null;
  if (idRequired && typeof configurable.checkpoint_id !== "string") return null;
  return {
    thread_id: configurable.thread_id,
    checkpoint_id: configurable.checkpoint_id ?? null,
    checkpoint_ns: configurable.checkpoint_ns || "",
    checkpoint_map: configurable.checkpoint_map || null,
  };
}

/** A config without the engine's own keys (`__pregel_…`) and callbacks. */
function publicConfig(config: unknown): unknown {
  if (typeof config !== "object" || config === null) return config;
  const { callbacks: _callbacks, ...rest } = config as Config;
  if (typeof rest.configurable !== "object" || rest.configurable === null) return rest;
  return { ...rest, configurable: Object.fromEntries(Object.entries(rest.configurable).filter(([key]) => !key.startsWith("__"))) };
}

/** A task of a debug event (or of the `tasks` mode) with its state's checkpoint, when its state is a config. */
export function debugTask(task: unknown): unknown {
  if (typeof task !== "object" || task === null || !("state" in task)) return task;
  const checkpoint = checkpointOf((task as { state: unknown }).state, false);
  if (checkpoint === null) return task;
  const { state: _state, ...rest } = task as Record<string, unknown>;
  return { ...rest, checkpoint };
}

/** A `debug` event's data as LangGraph's server writes it. */
export function debugEvent(data: unknown): unknown {
  if (typeof data !== "object" || data === null) return data;
  const event = data as { type?: string; payload?: Record<string, unknown> };
  if (event.type === "task_result" && event.payload !== undefined) return { ...event, payload: debugTask(event.payload) };
  if (event.type !== "checkpoint" || event.payload === undefined) return data;
  const { parentConfig, ...payload } = event.payload;
  return {
    ...event,
    payload: {
      ...payload,
      config: publicConfig(payload.config),
      parent_config: publicConfig(parentConfig),
      checkpoint: checkpointOf(payload.config, true),
      parent_checkpoint: checkpointOf(parentConfig, true),
      tasks: Array.isArray(payload.tasks) ? payload.tasks.map(debugTask) : payload.tasks,
    },
  };
}
