import { createRequire } from "node:module";
import { networkInterfaces } from "node:os";
import chalk from "chalk";
import type { Surface } from "../http/surface.js";
import { type BackgroundSetup, describeBackground } from "./background-setup.js";

/** Only this machine can reach a server listening here. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/u.test(host);
}

/** The lines under `ready`: version, each surface's rows, stores, the address on the network, and a request to paste. */
export function banner(options: {
  address: string;
  prefix: string;
  host: string;
  /** The surfaces served: each adds its rows (playground, docs, MCP, A2A…). */
  surfaces: readonly Surface[];
  /** Rows for the surfaces left off here that say why. */
  offNotes: readonly [string, string][];
  metrics: string | undefined;
  chatUiPrefix: string | undefined;
  firstModel: string | undefined;
  /** Where stored responses live: `memory` (gone at restart) or `postgres`. */
  store: { kind: string; expireAfter: string };
  /** Background runs: where and how they run. */
  background: BackgroundSetup;
  /** API keys are checked. */
  auth: boolean;
  /** The models whose state has no `messages` key and no `requestToInput`: said in a warning each. */
  withoutMessages?: readonly string[];
  /** A graph's exception reaches Agent Protocol clients as it is (a loopback server without keys). */
  developmentErrors?: boolean;
}): string {
  const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };
  const base = `${options.address}${options.prefix}`;
  const rows: [string, string][] = [["version", `chat-serve ${version}`]];
  rows.push(...options.surfaces.flatMap((surface) => surface.bannerRows?.(base, options.address) ?? []));
  rows.push(...options.offNotes);
  if (options.chatUiPrefix !== undefined)
    rows.push(["chat UIs", `${options.address}${options.chatUiPrefix}  (the chat-ui profile, for Open WebUI and the like)`]);
  if (options.metrics !== undefined) rows.push(["metrics", options.metrics]);
  rows.push([
    "stored",
    options.store.kind === "memory"
      ? `responses and conversations in memory: lost at restart (store.kind "postgres" keeps them; kept ${options.store.expireAfter} at most)`
      : `responses and conversations in Postgres, kept ${options.store.expireAfter} after their last use`,
  ]);
  rows.push(["background", describeBackground(options.background)]);
  if (options.developmentErrors !== undefined) {
    rows.push([
      "errors",
      options.developmentErrors
        ? "a graph's exception reaches Agent Protocol clients as its name and message, as under langgraphjs dev (loopback, no keys)"
        : "a graph's exception stays in the log; clients get a sentence of chat-serve's",
    ]);
  }
  if (options.host === "0.0.0.0" || options.host === "::") {
    const port = new URL(options.address).port;
    const external = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal);
    if (external !== undefined) rows.push(["network", `http://${external.address}:${port}${options.prefix}`]);
  }
  if (options.firstModel !== undefined) {
    const body = JSON.stringify({ model: options.firstModel, messages: [{ role: "user", content: "hello" }] });
    rows.push(["try", `curl ${base}/chat/completions -H 'content-type: application/json' -d '${body}'`]);
  }
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const lines = rows.map(([label, value]) => `  ${chalk.dim(label)}${" ".repeat(width - label.length)}${value}`);
  if (!isLoopback(options.host) && !options.auth) {
    lines.push(
      `${chalk.yellow("warning")} no API keys: anyone who can reach ${options.host} can run the models (set auth in the config; see "API keys and tenants" in docs/production.md)`,
    );
  }
  for (const model of options.withoutMessages ?? []) {
    lines.push(
      `${chalk.yellow("warning")} model '${model}': its state has no 'messages' key, so chat completions, Responses, Messages, MCP and A2A have no conversation to give it nor an answer to read (the Agent Protocol serves it as it is); set graphs.${model}.requestToInput in chat-serve.config.ts to build its input from the request, and return its answer as an AIMessage in 'messages'`,
    );
  }
  return `${lines.join("\n")}\n`;
}
