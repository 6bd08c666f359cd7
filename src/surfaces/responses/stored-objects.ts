import type { FastifyBaseLogger } from "fastify";
import { z } from "zod";
import { InvalidRequestError, UnsupportedParameterError } from "../../errors/catalogue.js";
import type { RunRouteOptions } from "../../http/run-request.js";
import type { ItemPage, ReleasedThread, StoredItem } from "../../store/conversation-store.js";
import { withDeadline } from "../../util/deadline.js";

const pageSchema = z.strictObject({
  after: z.string().min(1).max(200).optional(),
  limit: z.coerce
    .number("must be a number from 1 to 100")
    .int("must be a whole number from 1 to 100")
    .min(1, "must be from 1 to 100")
    .max(100, "must be from 1 to 100")
    .default(20),
  order: z.enum(["asc", "desc"], "must be asc or desc").default("desc"),
  include: z.union([z.string(), z.array(z.string())]).optional(),
  "include[]": z.union([z.string(), z.array(z.string())]).optional(),
});

/** The paging query of a list (`after`, `limit` 1–100, default 20, `order`, default `desc`), or a 400 naming the param. */
export function pageQuery(query: unknown): ItemPage {
  const result = pageSchema.safeParse(query ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === "unrecognized_keys") {
      const key = String(issue.keys[0]);
      throw new InvalidRequestError(`Unrecognized query parameter: ${key}.`, { param: key, code: "unknown_parameter" });
    }
    const param = String(issue.path[0] ?? "");
    throw new InvalidRequestError(`Invalid query parameter ${param}: ${issue.message}.`, { param });
  }
  const include = [result.data.include ?? [], result.data["include[]"] ?? []].flat();
  if (include.length > 0) {
    throw new UnsupportedParameterError(`include is not supported: this server has no ${include[0]} to add.`, { param: "include" });
  }
  return { limit: result.data.limit, order: result.data.order, ...(result.data.after === undefined ? {} : { after: result.data.after }) };
}

/** A list in the OpenAI shape. */
export function listBody(items: StoredItem[], hasMore: boolean) {
  return { object: "list" as const, data: items, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: hasMore };
}

/** One page of items held in memory (a response's input items). */
export function listPage(items: readonly StoredItem[], page: ItemPage) {
  const ordered = page.order === "asc" ? [...items] : [...items].reverse();
  let start = 0;
  if (page.after !== undefined) {
    start = ordered.findIndex((item) => item.id === page.after) + 1;
    if (start === 0)
      throw new InvalidRequestError(`after: no item of this list has the id '${page.after.slice(0, 80)}'.`, { param: "after" });
  }
  const slice = ordered.slice(start, start + page.limit);
  return listBody(slice, start + page.limit < ordered.length);
}

/**
 * Deletes the checkpoints of threads that nothing refers to any more (a deleted response or
 * conversation was the last), each under the backend deadline. Best effort: the object is
 * gone either way; a thread that could not be deleted now is logged.
 */
export async function releaseThreads(
  options: Pick<RunRouteOptions, "registry" | "backendTimeoutMs">,
  threads: readonly ReleasedThread[],
  log?: FastifyBaseLogger,
): Promise<void> {
  await Promise.all(
    threads.map(async ({ threadId, model }) => {
      try {
        await withDeadline("the checkpoint store", options.backendTimeoutMs, options.registry.deleteThread(model, threadId));
      } catch (error) {
        log?.warn({ err: error, model, thread: threadId }, "could not delete the checkpoints of a thread nothing refers to any more");
      }
    }),
  );
}
