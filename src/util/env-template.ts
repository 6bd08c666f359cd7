/** `${{ env.NAME }}` in a configured value: the variable's value, read when it is used. */
const ENV_TEMPLATE = /\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/gu;

/**
 * What is wrong with a value's `${{ env.NAME }}` templates, or undefined: a variable not named
 * with `prefix` (the allowlist that keeps other variables out), or one that is not set.
 */
export function envTemplateProblem(value: string, prefix: string): string | undefined {
  for (const [, name] of value.matchAll(ENV_TEMPLATE)) {
    if (!name!.startsWith(prefix)) return `names ${name}, which does not start with ${prefix}`;
    if (process.env[name!] === undefined) return `names ${name}, which is not set in the environment`;
  }
  return undefined;
}

/** A value with its `${{ env.NAME }}` templates filled from the environment (unset: empty). */
export function fillEnvTemplates(value: string): string {
  return value.replace(ENV_TEMPLATE, (_match, name: string) => process.env[name] ?? "");
}
