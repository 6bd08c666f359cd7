import type { z } from "zod";

/** Dotted path of a zod issue (`graphs.echo.description`, `messages.1.tool_call_id`). */
export function issuePath(path: readonly PropertyKey[], prefix: readonly PropertyKey[] = []): string {
  return [...prefix, ...path].map((segment) => String(segment)).join(".");
}

/** The first issue of a zod error as `path: message`, the way the CLI and errors name keys. */
export function describeFirstIssue(error: z.ZodError, prefix: readonly PropertyKey[] = []): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid value";
  const path = issuePath(issue.path, prefix);
  return path === "" ? issue.message : `${path}: ${issue.message}`;
}
