// `chat-serve start --workers 2` against one process (no `--workers`), complete requests on the
// echo graph, alternating rounds. Both use bench/workers.config.ts (Postgres checkpointer,
// Redis coordinator: what `--workers` needs). The servers are not pinned, since two workers
// need two cores; on a two-core machine the load generator shares them.

import { cpus } from "node:os";
import { compare } from "./lib/load.js";
import { spreadLoadGenerator, startChatServe } from "./lib/processes.js";
import { type Row, row } from "./lib/results.js";
import { chatBody } from "./lib/shared.js";

export async function workers(): Promise<{ rows: Row[]; notes: string[] }> {
  const config = ["--config", "bench/workers.config.ts"];
  spreadLoadGenerator(true);
  const one = await startChatServe(config, { pin: false });
  const two = await startChatServe([...config, "--workers", "2"], { pin: false });
  try {
    const load = (url: string) => ({ url: `${url}/chat/completions`, body: chatBody(false) });
    const result = await compare({ server: one, load: load(one.url) }, { server: two, load: load(two.url) }, 32);
    const rows = [
      row(
        "--workers",
        "2 workers vs 1 process, complete, 32 connections",
        `${Math.round(result.served.requests)} req/s`,
        `${Math.round(result.baseline.requests)} req/s`,
        result.throughput.ratio,
        { atLeast: 1.6 },
        [result.throughput.low, result.throughput.high],
      ),
    ];
    const notes = [
      `--workers: ${cpus().length} cores; servers unpinned and the load generator on every core${
        cpus().length <= 2 ? ", so it competes with the two workers: the ratio is a lower bound" : ""
      }.`,
    ];
    return { rows, notes };
  } finally {
    await Promise.all([one.stop(), two.stop()]);
    spreadLoadGenerator(false);
  }
}
