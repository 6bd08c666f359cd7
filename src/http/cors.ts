import type { FastifyInstance } from "fastify";

/**
 * Browser origins allowed to call the API (CORS), and how: `origins` (exact origins, or `"*"`
 * for any), `originRegex` (an origin the whole expression matches), the methods and request
 * headers allowed (default: every method the API serves, and the headers the browser asks for),
 * the response headers a page may read, whether cookies go along, and how long a browser keeps
 * a preflight's answer (default 600 s).
 */
export interface CorsSettings {
  origins?: readonly string[];
  originRegex?: string;
  methods?: readonly string[];
  headers?: readonly string[];
  exposeHeaders?: readonly string[];
  credentials?: boolean;
  maxAge?: number;
}

/** The methods of every surface: the Agent Protocol updates threads (PATCH) and store items (PUT). */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/**
 * What a page may read of an answer: request ids, rate limits, and the Agent Protocol's run
 * location and result counts (the SDK's `useStream` reads `content-location`).
 */
const EXPOSED = [
  "x-request-id",
  "retry-after",
  "x-ratelimit-limit-requests",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-reset-requests",
  "content-location",
  "x-pagination-total",
];

/** True when `cors` names `origin`: listed, or matched whole by `originRegex` (`"*"` aside). */
export function namesOrigin(cors: CorsSettings | undefined, origin: string): boolean {
  if (cors?.origins?.includes(origin) === true) return true;
  return cors?.originRegex !== undefined && new RegExp(`^(?:${cors.originRegex})$`, "u").test(origin);
}

/** Answers preflights and marks answers for the origins `cors` allows (before the key check: a preflight carries no key). */
export async function registerCors(app: FastifyInstance, cors: CorsSettings): Promise<void> {
  const any = cors.origins?.includes("*") === true;
  await app.register((await import("@fastify/cors")).default, {
    // Any origin: `*`, or the caller's own origin when cookies go along (browsers refuse `*` then).
    origin: any
      ? cors.credentials === true
        ? true
        : "*"
      : (origin, done) => done(null, origin !== undefined && namesOrigin(cors, origin)),
    methods: cors.methods === undefined ? METHODS : [...cors.methods],
    ...(cors.headers === undefined ? {} : { allowedHeaders: [...cors.headers] }),
    exposedHeaders: [...new Set([...EXPOSED, ...(cors.exposeHeaders ?? []).map((name) => name.toLowerCase())])],
    credentials: cors.credentials === true,
    maxAge: cors.maxAge ?? 600,
  });
}
