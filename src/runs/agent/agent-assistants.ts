import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import { AgentConflictError, AgentInvalidBodyError, AgentNotFoundError } from "../../errors/catalogue.js";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import {
  type AssistantRecord,
  type AssistantRecords,
  MEMORY_ASSISTANT_LIMITS,
  MemoryAssistantRecords,
} from "../../store/assistant-records.js";
import type { AgentRunRequest } from "./agent-run-config.js";
import { assistantIdOf, systemAssistant } from "./assistants.js";

/** What a client sends to make an assistant (`POST /assistants`). */
export interface AssistantCreate {
  assistant_id?: string | null;
  graph_id: string;
  config?: Record<string, unknown> | null;
  context?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
  if_exists?: "raise" | "do_nothing" | null;
  name?: string | null;
  description?: string | null;
}

/** What a client sends to change one (`PATCH /assistants/{id}`): each field given replaces, metadata merges. */
export type AssistantPatch = Partial<Omit<AssistantCreate, "assistant_id" | "if_exists">>;

/** An assistant an id names: the model it runs, its protocol JSON, and its record when a client made it. */
export interface FoundAssistant {
  model: string;
  json: Record<string, unknown>;
  custom?: AssistantRecord;
}

/** An assistant as the protocol shows it (its record without the tenant). */
export function assistantJson(record: AssistantRecord): Record<string, unknown> {
  const { scope: _scope, ...shown } = record;
  return shown;
}

/**
 * The Agent Protocol's assistants: each model's system assistant (its id the uuid5 of the
 * model, as `langgraph dev` makes it; the model id is accepted for it), fixed, and the ones
 * clients make on a model, with their config, context and metadata, in versions (each update
 * a new one; `setLatest` goes back to one). A run of an assistant gets its config and context
 * under the run's own.
 */
export class AgentAssistants {
  constructor(
    readonly registry: GraphRegistry,
    readonly records: AssistantRecords,
    readonly startedAt: string,
  ) {}

  /** The system assistant of a model the id names, or the client's assistant of the scope; undefined for none. */
  async find(scope: string, assistantId: string): Promise<FoundAssistant | undefined> {
    const models = this.registry.getGraphNames();
    const model = models.includes(assistantId) ? assistantId : models.find((name) => assistantIdOf(name) === assistantId);
    if (model !== undefined) return { model, json: systemAssistant(this.registry, model, this.startedAt) };
    const custom = await this.records.get(scope, assistantId);
    if (custom === undefined || !models.includes(custom.graph_id)) return undefined;
    return { model: custom.graph_id, json: assistantJson(custom), custom };
  }

  /** The client's assistants of a scope whose model is still served. */
  async custom(scope: string): Promise<AssistantRecord[]> {
    const models = new Set(this.registry.getGraphNames());
    return (await this.records.list(scope)).filter((record) => models.has(record.graph_id));
  }

  #graph(graphId: unknown, visible: readonly string[]): string {
    if (typeof graphId !== "string" || !visible.includes(graphId)) {
      throw new AgentInvalidBodyError(
        `graph_id: no graph '${String(graphId).slice(0, 80)}' is served here; the graphs are: ${visible.join(", ") || "none"}.`,
      );
    }
    return graphId;
  }

  async create(scope: string, body: AssistantCreate, visible: readonly string[], at = new Date().toISOString()): Promise<AssistantRecord> {
    const graph = this.#graph(body.graph_id, visible);
    const id = body.assistant_id ?? uuid7();
    const existing = (await this.find(scope, id)) ?? undefined;
    if (existing !== undefined) {
      if (body.if_exists === "do_nothing" && existing.custom !== undefined) return existing.custom;
      throw new AgentConflictError(`Assistant ${id} already exists.`);
    }
    if (this.records instanceof MemoryAssistantRecords && this.records.full) {
      throw new AgentConflictError(
        `This server keeps at most ${MEMORY_ASSISTANT_LIMITS.assistants} assistants in memory; delete some, or keep them in Postgres (store: { kind: "postgres" }).`,
      );
    }
    const record: AssistantRecord = {
      assistant_id: id,
      scope,
      graph_id: graph,
      config: body.config ?? {},
      context: body.context ?? {},
      metadata: body.metadata ?? {},
      name: body.name ?? graph,
      description: body.description ?? null,
      version: 1,
      created_at: at,
      updated_at: at,
    };
    await this.records.putVersion(record);
    return record;
  }

  /** The client's assistant an id names, for a change: a system assistant is the model itself (409). */
  async #changeable(scope: string, assistantId: string): Promise<AssistantRecord> {
    const found = await this.find(scope, assistantId);
    if (found === undefined) throw new AgentNotFoundError("assistant", assistantId);
    if (found.custom === undefined) {
      throw new AgentConflictError(
        `Assistant ${assistantId} is the system assistant of ${found.model}, which cannot be changed or deleted; make an assistant of your own with graph_id "${found.model}" (POST /assistants).`,
      );
    }
    return found.custom;
  }

  async patch(scope: string, assistantId: string, body: AssistantPatch, visible: readonly string[]): Promise<AssistantRecord> {
    const current = await this.#changeable(scope, assistantId);
    const versions = await this.records.versions(scope, assistantId);
    const at = new Date().toISOString();
    const record: AssistantRecord = {
      ...current,
      ...(body.graph_id == null ? {} : { graph_id: this.#graph(body.graph_id, visible) }),
      ...(body.config == null ? {} : { config: body.config }),
      ...(body.context == null ? {} : { context: body.context }),
      ...(body.name == null ? {} : { name: body.name }),
      ...(body.description == null ? {} : { description: body.description }),
      metadata: body.metadata == null ? current.metadata : { ...current.metadata, ...body.metadata },
      version: Math.max(current.version, ...versions.map((version) => version.version)) + 1,
      updated_at: at,
    };
    await this.records.putVersion(record);
    return record;
  }

  async setLatest(scope: string, assistantId: string, version: number): Promise<AssistantRecord> {
    await this.#changeable(scope, assistantId);
    const record = await this.records.setCurrent(scope, assistantId, version, new Date().toISOString());
    if (record === undefined) throw new AgentNotFoundError("assistant version", String(version));
    return record;
  }

  async delete(scope: string, assistantId: string): Promise<void> {
    await this.#changeable(scope, assistantId);
    await this.records.delete(scope, assistantId);
  }

  /** A run of an assistant: the assistant's config and context under the run's own, and the model it runs. */
  static runOf(run: AgentRunRequest, found: FoundAssistant): AgentRunRequest {
    const custom = found.custom;
    if (custom === undefined) return run;
    const config = custom.config as AgentRunRequest["config"];
    // `"context": null` is no context of the run's, as LangGraph's server reads it: the assistant's stands.
    const sent = run.context ?? undefined;
    const merged = sent === undefined || (typeof sent === "object" && !Array.isArray(sent));
    const context = merged ? { ...custom.context, ...(sent as Record<string, unknown> | undefined) } : sent;
    const { context: _sent, ...rest } = run;
    return {
      ...rest,
      graphId: found.model,
      config: { ...config, ...run.config, configurable: { ...config.configurable, ...run.config.configurable } },
      ...(merged && sent === undefined && Object.keys(context as object).length === 0 ? {} : { context }),
    };
  }
}
