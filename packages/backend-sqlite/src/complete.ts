/**
 * Worker-side completion, batched: every item is fenced by its JobRef (still processing, same attempts),
 * so a late completion after cancel, recovery or a re-claim changes nothing. One IMMEDIATE transaction
 * per batch: one commit for many jobs.
 */
import type { CompleteItem } from "@soniq/core";
import { immediate, type SqliteContext } from "./context.js";
import { invalidArgument } from "./errors.js";
import { jsonOrNull, NOW } from "./sql.js";

const FENCE = "id = @id AND status = 'processing' AND attempts = @attempt";

const MARK_DONE = `UPDATE soniq_jobs
  SET status = 'done', result = @result, expires_at = ${NOW} + @ttl, updated_at = ${NOW}
  WHERE ${FENCE}`;
// A non-finite TTL keeps the result forever (no expires_at).
const MARK_DONE_FOREVER = `UPDATE soniq_jobs
  SET status = 'done', result = @result, expires_at = NULL, updated_at = ${NOW}
  WHERE ${FENCE}`;
const DELETE_DONE = `DELETE FROM soniq_jobs WHERE ${FENCE}`;

function validate(items: readonly CompleteItem[]): void {
  items.forEach((item, index) => {
    const ttl = item.resultTtlMs;
    if (typeof ttl !== "number" || Number.isNaN(ttl) || ttl < 0 || !Number.isInteger(item.attempt)) {
      throw invalidArgument("complete items need an integer attempt and a resultTtlMs >= 0.", {
        index,
        id: item.id,
      });
    }
  });
}

export function complete(ctx: SqliteContext, items: readonly CompleteItem[]): number {
  validate(items);
  if (items.length === 0) return 0;
  const results = items.map((item) => jsonOrNull(item.result, "result"));
  return immediate(ctx, () => {
    let applied = 0;
    items.forEach((item, i) => {
      const fence = { id: item.id, attempt: item.attempt };
      if (item.resultTtlMs === 0) {
        applied += ctx.statement(DELETE_DONE).run(fence).changes;
      } else if (Number.isFinite(item.resultTtlMs)) {
        const params = { ...fence, result: results[i] ?? null, ttl: Math.round(item.resultTtlMs) };
        applied += ctx.statement(MARK_DONE).run(params).changes;
      } else {
        applied += ctx.statement(MARK_DONE_FOREVER).run({ ...fence, result: results[i] ?? null }).changes;
      }
    });
    return applied;
  });
}
