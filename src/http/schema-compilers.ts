import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

const require = createRequire(import.meta.url);

type SchemaController = NonNullable<FastifyServerOptions["schemaController"]>;
/** A compiler factory as fastify calls it: the app's shared schemas and its options in, a compiler out. */
type Factory = (externalSchemas: unknown, options: unknown) => unknown;

/** The factory of a fastify compiler package, required on the first call. */
function loadedOnFirstUse(packageName: string): Factory {
  let factory: Factory | undefined;
  return (externalSchemas, options) => {
    factory ??= (require(packageName) as () => Factory)();
    return factory(externalSchemas, options);
  };
}

/**
 * The `schemaController` option of the apps chat-serve creates: fastify's own JSON-schema
 * compilers (ajv for validation, fast-json-stringify for responses), loaded the first time a
 * route needs one. Fastify loads both whenever an app is created, about 50 ms of every start,
 * yet chat-serve validates with zod and none of its routes has a schema to compile; a route of
 * the user's that has one loads them then, and behaves as usual.
 * One difference: fastify takes compilers set here as custom, so it leaves the property names
 * of a `headers` schema as written instead of lowercasing them. Write them in lowercase.
 */
export const lazySchemaController = {
  compilersFactory: {
    buildValidator: loadedOnFirstUse("@fastify/ajv-compiler"),
    buildSerializer: loadedOnFirstUse("@fastify/fast-json-stringify-compiler"),
  },
} as SchemaController;
