import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { firstConnect } from "../coordination/first-connect.js";
import { withDeadline } from "../util/deadline.js";

/** A message one process sends every process that holds a session: JSON-RPC messages, or its end. */
export interface SessionMessage {
  session: string;
  messages?: unknown[];
  ended?: boolean;
}

/**
 * Sessions every process of a deployment shares (MCP's): each session's record in Redis,
 * expiring when unused for its TTL, and one channel on which a process tells the others what
 * reached it for a session they hold (an answer to a question one of them asked, the session's
 * end). The channel's connection is opened by the first listener and closed with the sessions.
 */
export class RedisSessions {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #warn: (error: unknown) => void;
  /** This process, so that it skips what it sent itself. */
  readonly #self = randomUUID();
  #subscriber: Redis | undefined;
  readonly #listeners = new Set<(message: SessionMessage) => void>();

  constructor(options: { redis: Redis; keyPrefix: string; timeoutMs: number; warn?: (error: unknown) => void }) {
    this.#redis = options.redis;
    this.#prefix = options.keyPrefix;
    this.#timeoutMs = options.timeoutMs;
    this.#warn = options.warn ?? (() => {});
  }

  #key(kind: string, id: string): string {
    return `${this.#prefix}:${kind}-session:${id}`;
  }

  get #channel(): string {
    return `${this.#prefix}:sessions`;
  }

  async #call<T>(operation: () => Promise<T>): Promise<T> {
    await firstConnect(this.#redis, this.#timeoutMs);
    return withDeadline("the shared sessions", this.#timeoutMs, operation());
  }

  /** Records a session for `ttlMs` (renewed by `touch`). */
  async put(kind: string, id: string, record: unknown, ttlMs: number): Promise<void> {
    await this.#call(() => this.#redis.set(this.#key(kind, id), JSON.stringify(record), "PX", ttlMs));
  }

  /** A session's record, or undefined when it ended or expired. */
  async get(kind: string, id: string): Promise<unknown> {
    const text = await this.#call(() => this.#redis.get(this.#key(kind, id)));
    return text === null ? undefined : JSON.parse(text);
  }

  /** The session was used: it lives `ttlMs` from now. */
  async touch(kind: string, id: string, ttlMs: number): Promise<void> {
    await this.#call(() => this.#redis.pexpire(this.#key(kind, id), ttlMs));
  }

  async delete(kind: string, id: string): Promise<void> {
    await this.#call(() => this.#redis.del(this.#key(kind, id)));
  }

  /** Tells every other process what reached this one for a session. */
  async publish(message: SessionMessage): Promise<void> {
    await this.#call(() => this.#redis.publish(this.#channel, JSON.stringify({ ...message, from: this.#self })));
  }

  /** Hears what other processes publish; the returned function stops it. */
  listen(listener: (message: SessionMessage) => void): () => void {
    this.#listeners.add(listener);
    if (this.#subscriber === undefined) {
      const subscriber = this.#redis.duplicate({
        connectionName: "chat-serve-sessions",
        maxRetriesPerRequest: null,
        enableOfflineQueue: true,
      });
      subscriber.on("error", () => {});
      subscriber.on("message", (_channel: string, text: string) => {
        let message: SessionMessage & { from?: string };
        try {
          message = JSON.parse(text) as SessionMessage & { from?: string };
        } catch {
          return;
        }
        if (message.from === this.#self || typeof message.session !== "string") return;
        for (const heard of this.#listeners) heard(message);
      });
      subscriber.subscribe(this.#channel).catch((error: unknown) => this.#warn(error));
      this.#subscriber = subscriber;
    }
    return () => this.#listeners.delete(listener);
  }

  /** Closes the channel's connection. */
  close(): void {
    this.#listeners.clear();
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }
}
