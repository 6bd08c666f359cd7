import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The requests whose params the SDK checks inside its handlers, where a failure would be an internal error. */
const SCHEMAS: Record<string, { safeParse(value: unknown): { success: boolean; error?: { issues: readonly Issue[] } } }> = {
  "logging/setLevel": SetLevelRequestSchema,
  "tools/call": CallToolRequestSchema,
  "tools/list": ListToolsRequestSchema,
};

interface Issue {
  path: readonly PropertyKey[];
  message: string;
}

/** What a field must be, in a sentence, for the fields a client most often gets wrong. */
const EXPECTED: Record<string, string> = {
  "logging/setLevel params.level": `one of ${LoggingLevelSchema.options.join(", ")}`,
  "tools/call params.name": "the name of a tool, a string (tools/list gives them)",
  "tools/call params.arguments": "an object of the tool's arguments",
};

/**
 * The -32602 message for a request whose params are not what its method takes, or undefined
 * when they are (or the method is not one checked here). A sentence, never a schema's dump.
 */
export function invalidParams(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method } = message as { method?: unknown };
  if (typeof method !== "string" || !Object.hasOwn(SCHEMAS, method)) return undefined;
  const parsed = SCHEMAS[method]!.safeParse(message);
  if (parsed.success) return undefined;
  const issue = parsed.error?.issues[0];
  const field = issue?.path.map(String).join(".") ?? "params";
  const expected = EXPECTED[`${method} ${field}`];
  return `Invalid params for ${method}: ${field} must be ${expected ?? `valid (${issue?.message ?? "it is not"})`}.`;
}
