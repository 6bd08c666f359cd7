/**
 * Parse options for a schema parsed once or a few times, at start (the config, the environment,
 * the API keys): zod compiles an object schema's parser on its first parse, which pays for itself
 * only on a path that parses the same schema again and again.
 */
export const PARSE_ONCE = { jitless: true } as const;
