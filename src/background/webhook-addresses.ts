import { lookup as dnsLookup } from "node:dns";
import { BlockList, isIP } from "node:net";

// Where a webhook a client names may never go, whatever the deployment's rules: the cloud
// metadata services (link-local 169.254.0.0/16 and fe80::/10, AWS's fd00:ec2::254, Alibaba's
// 100.100.100.200) and the names they answer to, however the address is spelled: an IPv4
// address inside an IPv6 one (mapped, compatible, NAT64, 6to4) is the IPv4 address.

const REFUSED = new BlockList();
REFUSED.addSubnet("169.254.0.0", 16, "ipv4");
REFUSED.addAddress("100.100.100.200", "ipv4");
REFUSED.addSubnet("fe80::", 10, "ipv6");
REFUSED.addAddress("fd00:ec2::254", "ipv6");

/** The metadata services' own host names (a resolver inside the cloud answers them). */
const REFUSED_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
  "metadata.tencentyun.com",
]);

/** An IPv6 address's eight 16-bit groups (a trailing dotted quad read as the last two), or undefined. */
function groupsOf(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/u.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail, ...rest] = text.split("::");
  if (rest.length > 0) return undefined;
  const parse = (part: string | undefined) =>
    part === undefined || part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16));
  const front = parse(head);
  const back = parse(tail);
  const groups = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

const quadOf = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4), if it carries one. */
function embeddedIPv4(groups: number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated but still routed by some stacks)
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return quadOf(groups[6]!, groups[7]!);
  // 64:ff9b::/96 (NAT64) and 64:ff9b:1::/48 (local NAT64): the IPv4 address in the last 32 bits
  if (groups[0] === 0x64 && groups[1] === 0xff9b && (zeros(2, 6) || groups[2] === 1)) return quadOf(groups[6]!, groups[7]!);
  // 2002:AABB:CCDD::/48 (6to4)
  if (groups[0] === 0x2002) return quadOf(groups[1]!, groups[2]!);
  return undefined;
}

/** Why no webhook may reach this address (an IP literal, any spelling the URL parser leaves), or undefined. */
export function refusedAddress(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/gu, "");
  const version = isIP(bare);
  if (version === 4) return REFUSED.check(bare, "ipv4") ? `${bare} is a cloud metadata or link-local address` : undefined;
  if (version !== 6) return undefined;
  const groups = groupsOf(bare);
  const inner = groups === undefined ? undefined : embeddedIPv4(groups);
  if (inner !== undefined && REFUSED.check(inner, "ipv4")) return `${bare} carries ${inner}, a cloud metadata or link-local address`;
  return REFUSED.check(bare, "ipv6") ? `${bare} is a cloud metadata or link-local address` : undefined;
}

/** Why no webhook may name this host (a metadata service's name, or a refused literal address), or undefined. */
export function refusedHost(hostname: string): string | undefined {
  const name = hostname.toLowerCase().replace(/\.$/u, "");
  if (REFUSED_NAMES.has(name)) return `${name} is a cloud metadata service`;
  return refusedAddress(name);
}

/** A resolver as `dns.lookup` with `{ all: true }` answers: every address of a host. */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const resolveWithDns: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => (error === null ? resolve(addresses) : reject(error)));
  });

/**
 * Why a webhook may not go to `hostname` once resolved: any of its addresses refused. A name
 * that does not resolve within `timeoutMs` is not refused here (the delivery resolves again and
 * checks then).
 */
export async function refusedOnceResolved(hostname: string, resolve: ResolveHost, timeoutMs: number): Promise<string | undefined> {
  const named = refusedHost(hostname);
  if (named !== undefined || isIP(hostname.replace(/^\[|\]$/gu, "")) !== 0) return named;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((settle) => {
    timer = setTimeout(() => settle(undefined), timeoutMs);
  });
  try {
    const addresses = await Promise.race([resolve(hostname).catch(() => undefined), late]);
    for (const { address } of addresses ?? []) {
      const refused = refusedAddress(address);
      if (refused !== undefined) return `${hostname} resolves to ${refused.split(" ")[0]}, a cloud metadata or link-local address`;
    }
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
