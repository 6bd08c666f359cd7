import { BaseCallbackHandler } from "@langchain/core/callbacks/base";

/** Undefined while the client takes what a run sends; a promise that settles once it does again (or has gone). */
export type ClientFlow = () => Promise<void> | undefined;

/**
 * Backpressure from a run's client to its models. A model that streams awaits its callbacks on
 * every token (`handleLLMNewToken`), and so does a graph's `dispatchCustomEvent`; this handler
 * makes them wait while the client's socket is full. A client that stops reading then holds
 * the run at the next token, instead of the server buffering the rest of the answer for it.
 * The client's own deadline (`stalledClientTimeoutMs`) ends the wait by dropping it, which
 * aborts the run as any client that leaves does.
 */
export class ClientFlowHandler extends BaseCallbackHandler {
  name = "chat_serve_client_flow";
  override ignoreChain = true;
  override ignoreAgent = true;
  override ignoreRetriever = true;
  readonly #flow: ClientFlow;

  constructor(flow: ClientFlow) {
    // Awaited: LangChain runs other handlers in the background, which would not hold the model.
    super({ _awaitHandler: true });
    this.#flow = flow;
  }

  override handleLLMNewToken(): Promise<void> | undefined {
    return this.#flow();
  }

  override handleCustomEvent(): Promise<void> | undefined {
    return this.#flow();
  }
}
