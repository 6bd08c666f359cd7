import type { LookupAddress, LookupOptions } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { type ResolveHost, refusedAddress, refusedHost, resolveWithDns } from "./webhook-addresses.js";

/** A webhook's destination that no rule lets it reach (a cloud metadata service): not tried again. */
export class WebhookDestinationRefused extends Error {
  override readonly name = "WebhookDestinationRefused";
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A lookup for `http.request` that checks every address a host resolves to as the connection is
 * made (so a name that changed since the run was created is checked as it is now), and connects
 * to those it checked: nothing resolves twice between the check and the connection.
 */
function guardedLookup(resolve: ResolveHost) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = family === undefined ? found : found.filter((entry) => entry.family === family);
        const refused = addresses.map(({ address }) => refusedAddress(address)).find((reason) => reason !== undefined);
        if (refused !== undefined) {
          callback(new WebhookDestinationRefused(`${hostname} resolves to ${refused}`), "");
          return;
        }
        const [first] = addresses;
        if (first === undefined) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
          return;
        }
        if (options.all === true) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

/**
 * POSTs a body and answers the status; the answer's body is read and dropped. Redirects are
 * never followed (a 3xx is the receiver's answer), so a receiver cannot send a delivery on to an
 * address the rules refuse. With `guard`, a metadata host or address is refused before and as
 * the connection is made.
 */
export function postWebhook(
  url: string,
  init: { headers: Record<string, string>; body: string; signal: AbortSignal; guard: boolean; resolve?: ResolveHost },
): Promise<number> {
  const target = new URL(url);
  if (init.guard) {
    const refused = refusedHost(target.hostname);
    if (refused !== undefined) return Promise.reject(new WebhookDestinationRefused(refused));
  }
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const body = Buffer.from(init.body);
  return new Promise((settle, fail) => {
    const request = send(
      target,
      {
        method: "POST",
        headers: { ...init.headers, "content-length": String(body.length) },
        signal: init.signal,
        ...(init.guard ? { lookup: guardedLookup(init.resolve ?? resolveWithDns) } : {}),
      },
      (response) => {
        response.resume();
        response.once("end", () => settle(response.statusCode ?? 0));
        response.once("error", fail);
      },
    );
    request.once("error", fail);
    request.end(body);
  });
}
