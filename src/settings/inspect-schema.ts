import { z } from "zod";
import { firstLine } from "../errors/first-line.js";

interface ZodInternals {
  _zod: { def: Record<string, unknown> & { type: string } };
}

function defOf(schema: unknown): (Record<string, unknown> & { type: string }) | undefined {
  return (schema as Partial<ZodInternals> | null)?._zod?.def;
}

/** True for a zod (v4) object schema, from any copy of zod. */
function isZodObject(value: unknown): value is z.ZodObject {
  return defOf(value)?.type === "object";
}

/** The child schemas of a zod schema, for walking the whole tree. */
function children(def: Record<string, unknown> & { type: string }): unknown[] {
  switch (def.type) {
    case "object":
      return [...Object.values(def.shape as Record<string, unknown>), def.catchall];
    case "array":
      return [def.element];
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return [def.innerType];
    case "union":
      return def.options as unknown[];
    case "intersection":
      return [def.left, def.right];
    case "record":
      return [def.keyType, def.valueType];
    case "tuple":
      return [...(def.items as unknown[]), def.rest];
    case "pipe":
      return [def.in, def.out];
    default:
      return [];
  }
}

/** Why a settings schema is not a strict, non-coercing object schema, or null when it is. */
export function structureProblem(schema: unknown): string | null {
  if (!isZodObject(schema)) return "client settings must be a zod object schema (z.strictObject({...}))";
  const catchall = defOf(defOf(schema)?.catchall);
  if (catchall?.type !== "never") {
    return "client settings must be strict, so unknown keys are rejected: use z.strictObject({...}) or .strict()";
  }
  const stack: unknown[] = [schema];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const current = stack.pop();
    const def = defOf(current);
    if (def === undefined || seen.has(current)) continue;
    seen.add(current);
    if (def.coerce === true) return `client settings must not coerce values (found z.coerce.${def.type}())`;
    stack.push(...children(def));
  }
  return null;
}

/** Why JSON Schema cannot represent a schema (transforms, dates, bigints, functions, maps, sets). */
export function representationProblem(schema: z.ZodType): string | null {
  try {
    z.toJSONSchema(schema, { unrepresentable: "throw", io: "output" });
  } catch (error) {
    return `client settings must round-trip through JSON: ${firstLine(error)}`;
  }
  return null;
}
