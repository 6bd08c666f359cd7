import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { GraphRegistry } from "../../registry/graph-registry.js";
import type { AgentRecords, AgentRunRecord } from "../../store/agent-records.js";
import type { Usage } from "../../wire/response.js";
import type { RunTracker } from "../run-tracker.js";
import type { AgentRunRequest } from "./agent-run-config.js";
import type { ProtocolLogs } from "./protocol-log.js";
import type { SharedAgentRuns } from "./shared-agent-runs.js";

/** What the Agent Protocol's runs are made with. */
export interface AgentRunsOptions {
  registry: GraphRegistry;
  records: AgentRecords;
  /** The server's runs in flight, so that a drain waits for these too. */
  tracker: RunTracker;
  backendTimeoutMs: number;
  log?: { warn(object: Record<string, unknown>, message: string): void; error(object: Record<string, unknown>, message: string): void };
  tracing?: { handler(): Promise<BaseCallbackHandler> };
  /**
   * A graph's own exception (not one of chat-serve's, nor a provider's) reaches the run's
   * clients as its name and message, as under `langgraphjs dev`; default: a sentence of ours.
   */
  showGraphErrors?: boolean;
  /** Told of the usage the models of each run reported, when it ends (the token metrics). */
  onUsage?: (model: string, usage: Usage | undefined) => void;
  /** How long a finished run's events stay for a join (default 10 minutes)… */
  retainEventsMs?: number;
  /** …and how many finished runs keep theirs at most (default 1,000, the oldest going first). */
  retainEventsOf?: number;
  /** The deployment's shared queue: background runs go on it, joins and cancels reach any process. */
  shared?: SharedAgentRuns;
  /** Told of each run that ended here with its final record (a run's webhook). */
  onEnded?: (run: AgentRunRecord, request: AgentRunRequest, result: unknown, startedAt?: string) => void;
  /** Where protocol v2's runs log their threads' events without a shared queue (default: this process's memory). */
  protocolLogs?: ProtocolLogs;
}
