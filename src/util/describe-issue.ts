import type { z } from "zod";

type Issue = z.core.$ZodIssue;

/** Dotted path of a zod issue (`graphs.echo.description`, `messages.1.tool_call_id`). */
export function issuePath(path: readonly PropertyKey[], prefix: readonly PropertyKey[] = []): string {
  return [...prefix, ...path].map((segment) => String(segment)).join(".");
}

/**
 * The most specific issue: for a union, the branch issue that got deepest into the value,
 * so `content.0.text` is named rather than `content`.
 */
function deepestIssue(issue: Issue): Issue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  let best: Issue = issue;
  for (const branch of issue.errors) {
    for (const nested of branch) {
      const candidate = deepestIssue({ ...nested, path: [...issue.path, ...nested.path] } as Issue);
      if (candidate.path.length > best.path.length) best = candidate;
    }
  }
  return best;
}

/** The first issue of a zod error, made as specific as it can be. */
export function firstIssue(error: z.ZodError): Issue | undefined {
  const issue = error.issues[0];
  return issue === undefined ? undefined : deepestIssue(issue);
}

/** The first issue of a zod error as `path: message`, the way the CLI and errors name keys. */
export function describeFirstIssue(error: z.ZodError, prefix: readonly PropertyKey[] = []): string {
  const issue = firstIssue(error);
  if (issue === undefined) return "invalid value";
  const path = issuePath(issue.path, prefix);
  return path === "" ? issue.message : `${path}: ${issue.message}`;
}

/** A request body's first issue, for an error that names the field: `path: message.` and the path as its param. */
export function bodyIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = firstIssue(error);
  const param = issue === undefined ? "" : issuePath(issue.path);
  return { message: `${param === "" ? "The body" : param}: ${issue?.message ?? "invalid value"}.`, param: param === "" ? null : param };
}
