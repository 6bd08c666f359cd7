// Memory of many open streams: 1,000 streams held open at once against a graph whose model
// waits between words, on the floor and on chat-serve, each in a fresh process. Retained heap
// per stream is (heap after a full GC with every stream open − heap before) / streams; peak
// RSS is the process's high-water mark. Every stream must deliver the whole text.

import { Agent, request } from "undici";
import { startTarget } from "./lib/processes.js";
import { fixed, type Row, row } from "./lib/results.js";
import { chatBody, FIRST_TEXT } from "./lib/shared.js";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const WORDS = 40;
const PROMPT = Array.from({ length: WORDS }, (_, index) => `word${index}`).join(" ");

interface Measured {
  heapPerStream: number;
  /** Streams that had already ended when the heap was read (a machine too slow to open them all in time). */
  endedEarly: number;
  maxRss: number;
  complete: number;
}

/** Text of one stream: the floor's `text` fields, or chat-serve's content deltas. */
function streamText(body: string): { text: string; done: boolean } {
  let text = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const frame = JSON.parse(line.slice(6)) as { text?: string; choices?: { delta?: { content?: string } }[] };
    text += frame.text ?? frame.choices?.[0]?.delta?.content ?? "";
  }
  return { text, done: body.includes("data: [DONE]") };
}

/** `route` picks the floor's route: the bare stream, or the one doing the spec's required work. */
async function measure(side: "floor" | "chat-serve", route = "stream"): Promise<Measured> {
  const target = await startTarget(side, { graph: "slow" });
  const dispatcher = new Agent({ connections: STREAMS, pipelining: 0, headersTimeout: 120_000, bodyTimeout: 120_000 });
  try {
    const url = side === "floor" ? `${target.url}/${route}` : `${target.url}/v1/chat/completions`;
    const body = side === "floor" ? { text: PROMPT } : chatBody(true, PROMPT);
    // Warm the code paths, then take the baseline.
    await (
      await request(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), dispatcher })
    ).body.text();
    const before = await target.memory();
    let started = 0;
    let ended = 0;
    let allStarted!: () => void;
    const everyStreamStarted = new Promise<void>((resolve) => (allStarted = resolve));
    const streams = Array.from({ length: STREAMS }, async () => {
      const response = await request(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        dispatcher,
      });
      let received = "";
      let counted = false;
      for await (const data of response.body) {
        received += data.toString();
        if (!counted && FIRST_TEXT.test(received)) {
          counted = true;
          started += 1;
          if (started === STREAMS) allStarted();
        }
      }
      ended += 1;
      return streamText(received);
    });
    await everyStreamStarted;
    const open = await target.memory();
    const endedEarly = ended;
    const results = await Promise.all(streams);
    const after = await target.memory();
    return {
      heapPerStream: (open.heapUsed - before.heapUsed) / STREAMS,
      endedEarly,
      maxRss: after.maxRss,
      complete: results.filter((result) => result.done && result.text === PROMPT).length,
    };
  } finally {
    await dispatcher.close();
    await target.stop();
  }
}

export async function openStreams(): Promise<Row[]> {
  const floor = await measure("floor");
  const required = await measure("floor", "stream-required");
  const served = await measure("chat-serve");
  const kib = (bytes: number) => `${fixed(bytes / 1024, 1)} KiB`;
  const mib = (bytes: number) => `${fixed(bytes / 1024 / 1024, 0)} MiB`;
  const area = `${STREAMS} open streams`;
  const rows: Row[] = [
    row(
      area,
      "retained heap per open stream",
      kib(served.heapPerStream),
      kib(floor.heapPerStream),
      served.heapPerStream / floor.heapPerStream,
      {
        atMost: 1.05,
      },
    ),
    row(
      area,
      "retained heap per open stream vs floor + usage + abort",
      kib(served.heapPerStream),
      kib(required.heapPerStream),
      served.heapPerStream / required.heapPerStream,
    ),
    row(area, "peak RSS", mib(served.maxRss), mib(floor.maxRss), served.maxRss / floor.maxRss, { atMost: 1.15 }),
    {
      area,
      case: "streams that delivered the whole text and ended",
      measured: `${served.complete} of ${STREAMS}`,
      baseline: `${floor.complete} of ${STREAMS}`,
      ratio: "–",
      target: `${STREAMS} of ${STREAMS}`,
      met: served.complete === STREAMS ? "yes" : "no",
    },
  ];
  // A stream that ended before the heap was read no longer counts in it: the ratio is off.
  const early = [floor, required, served].reduce((sum, measured) => sum + measured.endedEarly, 0);
  if (early > 0) {
    for (const entry of rows.filter((candidate) => candidate.case.startsWith("retained heap"))) {
      entry.case += ` (unreliable: ${early} streams ended before the heap was read; raise BENCH_CHUNK_DELAY_MS)`;
      entry.met = "–";
    }
  }
  return rows;
}
