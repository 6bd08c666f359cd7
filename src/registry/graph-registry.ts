import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { z } from "zod";
import { InMemoryRunCoordinator } from "../coordination/in-memory-run-coordinator.js";
import { MemoryPendingRunIndex, type PendingRunIndex } from "../coordination/pending-run-index.js";
import type { RunCoordinator } from "../coordination/run-coordinator.js";
import { TurnTakingMemorySaver } from "../coordination/turn-taking-memory-saver.js";
import { GraphConfigurationError, GraphNotFoundError, InvalidClientSettingsError, MAX_ECHOED_NAME } from "../errors/catalogue.js";
import { ClientSettingsDefinitionError, RegistrationError } from "../errors/developer-errors.js";
import { isChatServeError } from "../errors/serve-error.js";
import { checkContextSchema } from "../settings/runtime-context.js";
import type { ConversationStore } from "../store/conversation-store.js";
import { ExpiringStore } from "../store/expiring-store.js";
import { MemoryConversationStore } from "../store/memory-conversation-store.js";
import { firstIssue, issuePath } from "../util/describe-issue.js";
import { didYouMean } from "../util/did-you-mean.js";
import { GraphFeature } from "./features.js";
import { type GraphConfig, type GraphConfigInput, parseGraphConfig } from "./graph-config.js";
import { prepareInterruptGraph } from "./interrupt-support.js";
import { modelIdProblem } from "./model-id.js";
import { resolveGraphSource } from "./resolve-graph.js";
import type { ServableGraph } from "./servable-graph.js";
import { answerNodesOf, nodeNamesOf, withCheckpointer } from "./servable-graph.js";

/** Defaults for the graphs of a registry. */
export interface GraphRegistryOptions {
  /** Given to `INTERRUPTS` graphs compiled without a checkpointer. Default: an in-memory saver. */
  checkpointer?: unknown;
  /** The coordinator of `INTERRUPTS` graphs that name none themselves. No default. */
  runCoordinator?: RunCoordinator;
  /** The index of pending interrupt runs, beside the checkpointer. Default: in memory. */
  pendingRuns?: PendingRunIndex;
  /** Where stored responses, conversations and chat sessions are kept. Default: in memory. */
  store?: ConversationStore;
  /**
   * The LangGraph store graphs read through `config.store` / `getStore()` on the Agent
   * Protocol surface (and its `/store` routes). Default: LangGraph's `InMemoryStore`.
   */
  graphStore?: BaseStore;
}

const REGISTRY_BRAND = Symbol.for("chat-serve.GraphRegistry");

interface Entry {
  config: GraphConfig;
  compiled?: Promise<ServableGraph>;
  /** Known once the graph is resolved: whether it keeps conversations on threads. */
  stateful?: boolean;
  /** What a run of the model needs, made once the graph is resolved. */
  resolved?: ResolvedGraph;
}

/**
 * Everything a run of one model needs from the registry, answered once: its configuration,
 * its compiled graph, whether it keeps conversations on threads, and its coordinator.
 */
export interface ResolvedGraph {
  readonly model: string;
  readonly config: GraphConfig;
  readonly graph: ServableGraph;
  /** A stateful graph: its conversations continue on threads. */
  readonly stateful: boolean;
  /** The run coordinator that serializes the model's turns on a thread. */
  readonly coordinator: RunCoordinator;
  /**
   * The graph checkpointing with the server's checkpointer (for a background run another worker
   * may take over); undefined when the server has none or the graph cannot be copied.
   */
  withServerCheckpointer(): ServableGraph | undefined;
  /**
   * The graph as the LangGraph Agent Protocol runs it, always on a checkpointer: its own, else
   * the server's, else the in-memory saver the registry gives graphs that need one.
   */
  onThreads(): ServableGraph;
}

/**
 * Maps model names to graph configurations. Every configuration passes through the same
 * validated boundary, whether given to the constructor or to `register`; entries are frozen.
 *
 * @example
 * ```ts
 * const registry = new GraphRegistry({ echo: { graph, description: "Echoes you" } });
 * registry.getGraphNames(); // ["echo"]
 * ```
 */
export class GraphRegistry {
  readonly [REGISTRY_BRAND] = true;
  readonly #entries = new Map<string, Entry>();
  readonly #checkpointer: unknown;
  /** Copies of graphs with the server's checkpointer, for durable background runs. */
  readonly #checkpointed = new Map<string, { original: ServableGraph; copy: ServableGraph }>();
  /** Copies of graphs on a checkpointer and the graph store, for the Agent Protocol. */
  readonly #onThreadsCopies = new Map<string, { original: ServableGraph; copy: ServableGraph }>();
  /** The LangGraph store of the Agent Protocol's runs and `/store` routes. */
  readonly graphStore: BaseStore;
  readonly #runCoordinator: RunCoordinator | undefined;
  /** Where pending interrupt runs are indexed. */
  readonly pendingRuns: PendingRunIndex;
  #fallbackCheckpointer: unknown;
  /** Where stored responses, conversations and the turns of chat sessions are kept. */
  readonly store: ConversationStore;
  /** Graphs that keep conversations on threads: compiled with their own checkpointer, or `threads: true`. */
  readonly #stateful = new WeakSet<object>();
  /** The coordinator of graphs that name none, when the registry was given none: one process only. */
  #localCoordinator: RunCoordinator | undefined;

  constructor(graphs: Record<string, GraphConfigInput>, options: GraphRegistryOptions = {}) {
    this.#checkpointer = options.checkpointer;
    this.#runCoordinator = options.runCoordinator;
    this.pendingRuns = options.pendingRuns ?? new MemoryPendingRunIndex();
    this.store = options.store ?? new MemoryConversationStore();
    // Items put with a time to live (the Agent Protocol's `ttl`) go when it ends.
    this.graphStore = options.graphStore ?? new ExpiringStore(new InMemoryStore());
    // The memory backends are bounded: what they evict, the checkpointers forget too.
    if (this.pendingRuns instanceof MemoryPendingRunIndex && this.pendingRuns.onEvict === undefined) {
      this.pendingRuns.onEvict = async (entry) => {
        if (entry.thread === undefined) await this.deleteThread(entry.model, entry.key);
      };
    }
    if (this.store instanceof MemoryConversationStore && this.store.onEvict === undefined) {
      this.store.onEvict = (threads) => {
        for (const { model, threadId } of threads) void this.deleteThread(model, threadId).catch(() => {});
      };
    }
    if (graphs === null || typeof graphs !== "object") {
      throw new RegistrationError("the registry must be an object mapping model IDs to graph configurations");
    }
    const modelIds = Object.keys(graphs);
    if (modelIds.length === 0) {
      throw new RegistrationError("the registry is empty: register at least one graph");
    }
    for (const modelId of modelIds) this.register(modelId, graphs[modelId] as GraphConfigInput);
  }

  /** True for a registry, including one made by another copy of this package. */
  static isRegistry(value: unknown): value is GraphRegistry {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[REGISTRY_BRAND] === true;
  }

  /** Adds or replaces one graph after validating its configuration. */
  register(modelId: string, config: GraphConfigInput): void {
    if (typeof modelId !== "string") throw new RegistrationError("a model ID must be a string");
    const problem = modelIdProblem(modelId);
    if (problem !== null) throw new RegistrationError(problem, modelId);
    let parsed: GraphConfig;
    try {
      parsed = parseGraphConfig(config);
    } catch (error) {
      if (error instanceof z.ZodError) {
        const issue = firstIssue(error);
        throw new RegistrationError(issue?.message ?? "invalid configuration", modelId, {
          cause: error,
          key: issue === undefined || issue.path.length === 0 ? undefined : issuePath(issue.path),
        });
      }
      throw error;
    }
    try {
      parsed.clientSettings?.inspect();
    } catch (error) {
      // The settings may come from another copy of this package (the user's import).
      if (isChatServeError(error, ClientSettingsDefinitionError)) {
        throw new RegistrationError(error.message, modelId, { cause: error, key: "clientSettings" });
      }
      throw error;
    }
    if (parsed.presetSettings !== undefined) {
      if (parsed.clientSettings === undefined) {
        throw new RegistrationError("is a preset, but its graph takes no client settings", modelId, { key: "presetSettings" });
      }
      try {
        parsed.clientSettings.validateRequest({}, parsed.presetSettings);
      } catch (error) {
        if (!isChatServeError(error, InvalidClientSettingsError)) throw error;
        throw new RegistrationError((error as Error).message.replace(/^Invalid preset settings: /u, "").replace(/\.$/u, ""), modelId, {
          cause: error,
          key: "presetSettings",
        });
      }
    }
    if (parsed.features.has(GraphFeature.INTERRUPTS)) {
      const runCoordinator = parsed.runCoordinator ?? this.#runCoordinator;
      if (runCoordinator === undefined) {
        throw new RegistrationError(
          "has INTERRUPTS but no run coordinator: give runCoordinator (InMemoryRunCoordinator for one process)",
          modelId,
        );
      }
      parsed = Object.freeze({ ...parsed, runCoordinator });
    }
    this.#entries.set(modelId, { config: parsed });
  }

  #notFound(name: string): GraphNotFoundError {
    return this.modelNotFound(name, this.getGraphNames());
  }

  /** The 404 for a model the caller cannot see, naming only the models it can (`known`). */
  modelNotFound(name: string, known: readonly string[]): GraphNotFoundError {
    // A did-you-mean only for names of a sensible length: the name comes from the request.
    return new GraphNotFoundError(name, known, name.length <= MAX_ECHOED_NAME ? didYouMean(name, known) : "");
  }

  /** The configuration of one model; throws `GraphNotFoundError` when it is not registered. */
  getGraph(name: string): GraphConfig {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw this.#notFound(name);
    return entry.config;
  }

  /** Registered model names, in registration order. */
  getGraphNames(): string[] {
    return [...this.#entries.keys()];
  }

  /** The compiled graph of a model. Factories run once; a failed factory is retried next time. */
  resolveGraph(name: string): Promise<ServableGraph> {
    const entry = this.#entries.get(name);
    if (entry === undefined) return Promise.reject(this.#notFound(name));
    if (entry.compiled === undefined) {
      entry.compiled = resolveGraphSource(name, entry.config.graph).then((resolved) => {
        let graph = resolved;
        checkContextSchema({ model: name, ...entry.config }, graph);
        checkStreamableNodes(name, entry.config.streamableNodeNames, graph);
        if (entry.config.autoStreamableNodes) {
          entry.config = Object.freeze({ ...entry.config, streamableNodeNames: Object.freeze(answerNodesOf(graph)) });
        }
        const ownCheckpointer = typeof graph.checkpointer === "object" && graph.checkpointer !== null;
        if (entry.config.features.has(GraphFeature.INTERRUPTS) || entry.config.threads) {
          this.#fallbackCheckpointer ??= this.#checkpointer ?? new TurnTakingMemorySaver();
          graph = prepareInterruptGraph(name, graph, this.#fallbackCheckpointer, entry.config.threads ? "threads" : "INTERRUPTS");
        }
        entry.stateful = ownCheckpointer || entry.config.threads;
        if (entry.stateful) this.#stateful.add(graph);
        return graph;
      });
      entry.compiled.catch(() => {
        entry.compiled = undefined;
      });
    }
    return entry.compiled;
  }

  /** What a run of a model needs, resolved once (the graph compiled, its settings filled in). */
  async resolve(name: string): Promise<ResolvedGraph> {
    const known = this.#entries.get(name)?.resolved;
    if (known !== undefined) return known;
    const graph = await this.resolveGraph(name);
    const entry = this.#entries.get(name)!;
    if (entry.resolved?.graph === graph) return entry.resolved;
    entry.resolved = Object.freeze({
      model: name,
      config: entry.config,
      graph,
      stateful: this.#stateful.has(graph),
      coordinator: this.coordinatorOf(name),
      withServerCheckpointer: () => this.withServerCheckpointer(name, graph),
      onThreads: () => this.#onThreads(name, graph),
    });
    return entry.resolved;
  }

  /** True for a stateful graph (resolved by this registry): its conversations continue on threads. */
  isStatefulGraph(graph: ServableGraph): boolean {
    return this.#stateful.has(graph);
  }

  /** Whether a resolved model keeps conversations on threads; undefined before its graph is resolved. */
  statefulIfResolved(name: string): boolean | undefined {
    return this.#entries.get(name)?.stateful;
  }

  /** Whether a model's graph is stateful; resolves the graph. */
  async isStateful(name: string): Promise<boolean> {
    return this.isStatefulGraph(await this.resolveGraph(name));
  }

  /**
   * A copy of a graph compiled without a checkpointer that checkpoints with the server's (for
   * background runs another worker may take over); undefined when the server has none of its
   * own or the graph cannot be copied. The graph itself is left as it is.
   */
  withServerCheckpointer(name: string, graph: ServableGraph): ServableGraph | undefined {
    if (this.#checkpointer === undefined) return undefined;
    const cached = this.#checkpointed.get(name);
    if (cached?.original === graph) return cached.copy;
    if (typeof graph.getState !== "function") return undefined;
    const copy = withCheckpointer(graph, this.#checkpointer);
    if (copy === undefined) return undefined;
    this.#checkpointed.set(name, { original: graph, copy });
    return copy;
  }

  #onThreads(name: string, graph: ServableGraph): ServableGraph {
    const cached = this.#onThreadsCopies.get(name);
    if (cached?.original === graph) return cached.copy;
    const own = typeof graph.checkpointer === "object" && graph.checkpointer !== null;
    const hasStore = typeof (graph as { store?: unknown }).store === "object" && (graph as { store?: unknown }).store !== null;
    if (own && hasStore) return graph;
    if (!own) this.#fallbackCheckpointer ??= this.#checkpointer ?? new TurnTakingMemorySaver();
    const copy = withCheckpointer(graph, own ? graph.checkpointer : this.#fallbackCheckpointer);
    if (copy === undefined)
      throw new GraphConfigurationError(`Model '${name}' cannot run on a checkpointer: its graph has no withConfig().`);
    if (!hasStore) (copy as { store?: unknown }).store = this.graphStore;
    this.#onThreadsCopies.set(name, { original: graph, copy });
    return copy;
  }

  /** Deletes a thread's checkpoints from a model's checkpointer; nothing for a model no longer served. */
  async deleteThread(model: string, threadId: string): Promise<void> {
    if (!this.#entries.has(model)) return;
    const saver = (await this.resolveGraph(model)).checkpointer as { deleteThread?: (id: string) => Promise<void> } | undefined;
    await saver?.deleteThread?.(threadId);
  }

  /** The run coordinator that serializes a model's turns on a thread. */
  coordinatorOf(name: string): RunCoordinator {
    const config = this.getGraph(name);
    if (config.runCoordinator !== undefined) return config.runCoordinator;
    this.#localCoordinator ??= this.#runCoordinator ?? new InMemoryRunCoordinator();
    return this.#localCoordinator;
  }

  /**
   * The models whose graph state has no `messages` channel and whose config builds no input of
   * its own (`requestToInput`): the chat surfaces have no conversation to give them. Resolves them.
   */
  async withoutMessages(): Promise<string[]> {
    const found: string[] = [];
    for (const name of this.getGraphNames()) {
      const graph = await this.resolveGraph(name);
      const channels = (graph as { channels?: Record<string, unknown> }).channels ?? {};
      if (!Object.hasOwn(channels, "messages") && this.getGraph(name).requestToInput === undefined) found.push(name);
    }
    return found;
  }

  /** Resolves every graph once, so configuration mistakes surface before serving. */
  async validateAll(): Promise<void> {
    for (const name of this.getGraphNames()) {
      try {
        await this.resolveGraph(name);
      } catch (error) {
        if (isChatServeError(error, RegistrationError)) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new RegistrationError(`could not load its graph: ${reason}`, name, { cause: error });
      }
    }
  }
}

/** Every listed streamable node must be a node of the graph or of a subgraph inside it. */
function checkStreamableNodes(model: string, listed: readonly string[], graph: ServableGraph): void {
  if (listed.length === 0) return;
  const names = nodeNamesOf(graph);
  for (const name of listed) {
    if (names.has(name)) continue;
    const known = [...names].map((node) => `'${node}'`).join(", ");
    throw new RegistrationError(`'${name}' is not a node of the graph${didYouMean(name, names)} (its nodes: ${known})`, model, {
      key: "streamableNodeNames",
    });
  }
}
