import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";

/** The tracing backend's own settings (deployment secrets, never request values). */
export interface TracingSettings {
  publicKey: string;
  secretKey: string;
  /** Default: the backend's cloud. Set for another region or a self-hosted instance. */
  baseUrl?: string;
}

interface Backend {
  handler: BaseCallbackHandler;
  flush: () => Promise<void>;
  shutdown: () => Promise<void>;
}

/**
 * The Langfuse callback of one server: built on the first run that needs it (so the
 * tracing libraries load only when tracing is on), then reused by every run. It exports
 * through its own tracer provider rather than the process-global one.
 */
export class TracingCallback {
  readonly #settings: TracingSettings;
  #backend: Promise<Backend> | undefined;

  constructor(settings: TracingSettings) {
    this.#settings = settings;
  }

  /** The callback handler to add beside a graph's own callbacks. */
  async handler(): Promise<BaseCallbackHandler> {
    this.#backend ??= this.#build();
    return (await this.#backend).handler;
  }

  /** Sends every finished span now. */
  async flush(): Promise<void> {
    if (this.#backend !== undefined) await (await this.#backend).flush();
  }

  /** Flushes and stops exporting; called when the server closes. */
  async shutdown(): Promise<void> {
    if (this.#backend !== undefined) await (await this.#backend).shutdown();
  }

  async #build(): Promise<Backend> {
    const [{ context }, { AsyncLocalStorageContextManager }, { BasicTracerProvider }, { LangfuseSpanProcessor }, tracing, langchain] =
      await Promise.all([
        import("@opentelemetry/api"),
        import("@opentelemetry/context-async-hooks"),
        import("@opentelemetry/sdk-trace-base"),
        import("@langfuse/otel"),
        import("@langfuse/tracing"),
        import("@langfuse/langchain"),
      ]);
    // Langfuse carries trace attributes (the session) through OpenTelemetry context, which
    // needs a context manager; keep one the application registered already.
    const manager = new AsyncLocalStorageContextManager().enable();
    if (!context.setGlobalContextManager(manager)) manager.disable();
    const processor = new LangfuseSpanProcessor({
      publicKey: this.#settings.publicKey,
      secretKey: this.#settings.secretKey,
      baseUrl: this.#settings.baseUrl,
    });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    tracing.setLangfuseTracerProvider(provider);
    return {
      handler: new langchain.CallbackHandler() as unknown as BaseCallbackHandler,
      flush: () => provider.forceFlush(),
      shutdown: () => provider.shutdown(),
    };
  }
}
