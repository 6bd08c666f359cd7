import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of a real service, so a test can make the service vanish
 * (`stop`), reset its connections (`reset`), stall it (`blackhole`: packets dropped, nothing
 * closed) and bring it back (`start`, `restore`), without touching the server other tests use.
 */
export class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  /** Each forwarded connection: the client's side and the service's. */
  readonly #pairs = new Set<{ client: Socket; upstream: Socket }>();
  #blackholed = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** The connections open through the proxy, both sides counted. */
  get openSockets(): number {
    return this.#sockets.size;
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on("close", () => this.#sockets.delete(socket));
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      this.#track(client);
      client.on("error", () => client.destroy());
      if (this.#blackholed) {
        // Accepted and never answered: what a dropped route looks like to the client.
        client.pause();
        return;
      }
      const upstream = connect(this.targetPort, this.targetHost);
      this.#track(upstream);
      for (const socket of [client, upstream]) {
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      const pair = { client, upstream };
      this.#pairs.add(pair);
      client.once("close", () => this.#pairs.delete(pair));
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Refuses new connections and cuts the open ones, like a service that went down. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
  }

  /** Resets every open connection (TCP RST) and keeps listening: a restart or failover. */
  reset(): void {
    for (const socket of this.#sockets) socket.resetAndDestroy();
  }

  /**
   * Stops moving bytes, both ways, on open and new connections, and closes nothing: a stalled
   * or partitioned service. The client sees no error, only silence.
   */
  blackhole(): void {
    this.#blackholed = true;
    for (const socket of this.#sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  /**
   * Forgets the open connections, as a NAT or a load balancer does once its idle timeout has
   * passed: they look open to both ends until the client sends on one, which is then reset
   * (TCP RST), or with `silently`, whose bytes then go nowhere and nothing is ever said. New
   * connections are forwarded as before.
   */
  forget(options: { silently?: boolean } = {}): void {
    for (const { client, upstream } of this.#pairs) {
      client.unpipe();
      upstream.unpipe();
      if (options.silently === true) {
        client.on("data", () => {});
      } else {
        client.once("data", () => {
          client.resetAndDestroy();
          upstream.destroy();
        });
      }
      client.resume();
    }
    this.#pairs.clear();
  }

  /** Ends a blackhole: the stalled connections are reset, new ones are forwarded again. */
  restore(): void {
    this.#blackholed = false;
    this.reset();
  }
}

/** A started proxy in front of the Postgres at `postgresUrl`, and the URL that reaches it through the proxy. Stop it when done. */
export async function startPostgresProxy(postgresUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(postgresUrl);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  const url = new URL(postgresUrl);
  url.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: url.href };
}
