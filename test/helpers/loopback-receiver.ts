import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server that records every request: the stand-in for a SaaS we cannot reach. */
export async function startReceiver(
  options: { failFirst?: number; delayMs?: number } = {},
): Promise<{ url: string; requests: ReceivedRequest[]; close: () => Promise<void> }> {
  const requests: ReceivedRequest[] = [];
  let failures = options.failFirst ?? 0;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (data: Buffer) => (body += data.toString()));
    request.on("end", () => {
      requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      // The first `failFirst` requests are answered 500, as a receiver that is down would.
      const status = failures > 0 ? 500 : 200;
      failures -= 1;
      const answer = () => response.writeHead(status, { "content-type": "application/json" }).end("{}");
      // A receiver that does its work before it answers takes this long.
      if (options.delayMs === undefined) answer();
      else setTimeout(answer, options.delayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
