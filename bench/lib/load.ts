// Load from this process (autocannon) against servers in other processes, in alternating
// rounds, with the servers' CPU time per request.

import autocannon from "autocannon";
import type { Server } from "./processes.js";

export const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 2),
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
};

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The value below which a share `p` of the values fall; NaN when there are none. */
export const percentile = (values: number[], p: number) =>
  values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

export interface Load {
  url: string;
  body: unknown;
  headers?: Record<string, string>;
}

export interface Sample {
  requests: number;
  p50: number;
  p99: number;
  /** Server CPU milliseconds per completed request. */
  cpuMs: number;
  errors: number;
}

/** One autocannon run against one server, with the server's CPU time over the run. */
export async function sample(server: Server, load: Load, connections: number, seconds = settings.seconds): Promise<Sample> {
  const cpuBefore = server.cpuMs();
  const result = await autocannon({
    url: load.url,
    method: "POST",
    connections,
    duration: seconds,
    headers: { "content-type": "application/json", ...load.headers },
    body: JSON.stringify(load.body),
  });
  const cpu = server.cpuMs() - cpuBefore;
  return {
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMs: cpu / Math.max(1, result.requests.total),
    errors: result.errors + result.non2xx,
  };
}

export interface Side {
  requests: number;
  p50: number;
  p99: number;
  cpuMs: number;
  errors: number;
}

export interface Comparison {
  baseline: Side;
  served: Side;
  /** Medians of the per-round ratios served / baseline, with their range for throughput. */
  throughput: { ratio: number; low: number; high: number };
  p99: number;
  cpu: number;
}

const summarize = (samples: Sample[]): Side => ({
  requests: median(samples.map((s) => s.requests)),
  p50: median(samples.map((s) => s.p50)),
  p99: median(samples.map((s) => s.p99)),
  cpuMs: median(samples.map((s) => s.cpuMs)),
  errors: samples.reduce((sum, s) => sum + s.errors, 0),
});

/** The per-round ratios of served to baseline, summed up as a comparison. */
function comparison(samples: { baseline: Sample[]; served: Sample[] }): Comparison {
  const ratios = (pick: (sample: Sample) => number, floor = 0) =>
    samples.served.map((mine, round) => pick(mine) / Math.max(pick(samples.baseline[round]!), floor));
  const throughput = ratios((sample) => sample.requests);
  return {
    baseline: summarize(samples.baseline),
    served: summarize(samples.served),
    throughput: { ratio: median(throughput), low: Math.min(...throughput), high: Math.max(...throughput) },
    p99: median(ratios((sample) => sample.p99, 1)),
    cpu: median(ratios((sample) => sample.cpuMs)),
  };
}

/**
 * Several rounds of both sides, and the median of the per-round ratios: these machines are
 * noisy, and two sides measured minutes apart are not comparable. `alternating` (the default)
 * loads one side, then the other, the order flipping every round, after one unmeasured
 * warm-up round of each. `side by side` loads both in the same seconds, each with its own
 * connections: they share the server core, so whatever the machine's speed does during a
 * round (on a shared VM it changes by half within seconds) it does to both, and the ratio is
 * each round's work done by one against the other's, not two moments of the machine. For the
 * 5 % differences the required-work rows look at; latency is not comparable that way (each
 * side waits for the core the other holds), and the caller leaves it out.
 */
export async function compare(
  baseline: { server: Server; load: Load },
  served: { server: Server; load: Load },
  connections: number,
  rounds = settings.rounds,
  how: "alternating" | "side by side" = "alternating",
): Promise<Comparison> {
  const run = (side: { server: Server; load: Load }, seconds?: number) => sample(side.server, side.load, connections, seconds);
  const samples = { baseline: [] as Sample[], served: [] as Sample[] };
  if (how === "side by side") {
    await Promise.all([run(baseline, 1), run(served, 1)]);
    for (let round = 0; round < rounds; round += 1) {
      const [base, mine] = await Promise.all([run(baseline), run(served)]);
      samples.baseline.push(base);
      samples.served.push(mine);
    }
    return comparison(samples);
  }
  await run(baseline, 1);
  await run(served, 1);
  for (let round = 0; round < rounds; round += 1) {
    // 0 is the baseline, 1 the served side.
    const got: Sample[] = [];
    for (const side of round % 2 === 0 ? [0, 1] : [1, 0]) got[side] = await run(side === 0 ? baseline : served);
    samples.baseline.push(got[0]!);
    samples.served.push(got[1]!);
  }
  return comparison(samples);
}
