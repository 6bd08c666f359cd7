import { UserError } from "../errors/developer-errors.js";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The fields of a request's log line that its message spells out. */
const REQUEST_LINE_FIELDS = "method,path,status,model,durationMs,outcome,errorCode";

/**
 * Readable log lines in a terminal, JSON lines otherwise (and with `LOG_FORMAT=json`), at
 * `LOG_LEVEL` (default info).
 */
export function loggerOptions(flag: string | undefined) {
  const level = flag ?? process.env.LOG_LEVEL ?? "info";
  if (!LOG_LEVELS.includes(level)) {
    const source = flag === undefined ? "LOG_LEVEL" : "--log-level";
    throw new UserError(`${source} must be one of ${LOG_LEVELS.join(", ")} (got '${level}')`);
  }
  if (process.stdout.isTTY !== true || process.env.LOG_FORMAT === "json") return { level };
  return {
    level,
    // One line per request: its message already says what these fields hold; the rest follows on that line.
    transport: {
      target: "pino-pretty",
      options: { translateTime: "HH:MM:ss", ignore: `pid,hostname,${REQUEST_LINE_FIELDS}`, singleLine: true },
    },
  };
}
