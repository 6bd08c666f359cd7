import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { ConfigError } from "../errors/developer-errors.js";

/**
 * The packages tracing needs: optional peers, installed by whoever turns tracing on (49 MB of
 * OpenTelemetry that a server without tracing does not carry).
 */
const TRACING_PACKAGES = [
  "@langfuse/langchain",
  "@langfuse/otel",
  "@langfuse/tracing",
  "@opentelemetry/api",
  "@opentelemetry/context-async-hooks",
  "@opentelemetry/core",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/sdk-trace-base",
] as const;

/** Whether an import failed because the package itself is not installed (not one of its own imports). */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && typeof message === "string" && message.includes(`'${name}'`);
}

/**
 * Loads tracing's packages, so a server with tracing on but without them stops at start with
 * one line naming what to install, rather than failing its first traced run.
 */
export async function assertTracingInstalled(): Promise<void> {
  const missing: string[] = [];
  for (const name of TRACING_PACKAGES) {
    try {
      await import(name);
    } catch (error) {
      if (!isMissing(error, name)) throw error;
      missing.push(name);
    }
  }
  if (missing.length === 0) return;
  throw new ConfigError(
    `SVC_ENABLE_TRACING is true but tracing's packages are not installed (${missing.join(", ")}); install them with: npm install ${TRACING_PACKAGES.join(" ")}`,
  );
}

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
