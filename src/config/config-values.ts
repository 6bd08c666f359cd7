import { z } from "zod";

/** `"./path/to/module.ts:exportName"`, or a path alone for the default export. */
export type ModuleReference = string;

/** A value, or the module reference that names it. */
export type Referable<T> = T | ModuleReference;

const moduleReference = z.string().min(1, "must not be empty");

/** A config value given as itself (an object or a function) or as a `"./module.ts:export"` reference. */
export const valueOrReference = (what: string) =>
  z.union([
    moduleReference,
    z.custom<object>((value) => (typeof value === "object" && value !== null) || typeof value === "function", {
      error: `must be ${what} or a "./module.ts:export" reference`,
    }),
  ]);
