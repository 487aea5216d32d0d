/**
 * Completion, batched: one statement marks every finished job of a flush done (or deletes it when its
 * result TTL is 0). Each item is fenced by `status = 'processing' AND attempts = <the claim's attempt>`,
 * so a late completion after cancel, recovery or a re-claim changes nothing.
 *
 * The rows are found by `id = ANY($1)` (primary-key lookups) and each row's attempt, TTL and result are
 * read from one jsonb object keyed by id (`$2 -> id`, a binary search). No join with unnest(): its plan
 * depends on row estimates, and with stale statistics Postgres chose a nested loop that rescanned the
 * array per row (a 4,700-item flush took 8.8 s); this form is linear whatever the statistics say.
 */
import type { CompleteItem } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { ASYNC_COMMIT, type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";

// $2: { "<id>": [attempt, resultTtlMs, result?] }; a missing third element leaves result NULL.
const COMPLETE = (from: string) => `UPDATE soniq_jobs
SET status = 'done', result = $2::jsonb -> id::text -> 2, updated_at = now(),
    expires_at = now() + ($2::jsonb -> id::text ->> 1)::float8 * interval '1 millisecond'
${from ? `FROM ${from}` : ""}
WHERE id = ANY($1::uuid[]) AND status = 'processing' AND attempts = ($2::jsonb -> id::text ->> 0)::int`;

const COMPLETE_AND_DELETE = (from: string) => `DELETE FROM soniq_jobs ${from ? `USING ${from}` : ""}
WHERE id = ANY($1::uuid[]) AND status = 'processing' AND attempts = ($2::jsonb -> id::text ->> 0)::int`;

function validate(items: readonly CompleteItem[]): void {
  const bad = items.filter(
    (item) =>
      !Number.isFinite(item.resultTtlMs) || item.resultTtlMs < 0 || !Number.isSafeInteger(item.attempt),
  );
  if (bad.length > 0) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      "complete(): every item needs an integer attempt and a finite resultTtlMs >= 0.",
      { context: { ids: bad.map((item) => item.id) } },
    );
  }
}

function encodeItems(items: readonly CompleteItem[]): string {
  const byId: Record<string, unknown[]> = {};
  for (const item of items) {
    byId[item.id.toLowerCase()] =
      item.result === undefined || item.result === null
        ? [item.attempt, item.resultTtlMs]
        : [item.attempt, item.resultTtlMs, item.result];
  }
  return JSON.stringify(byId);
}

async function markDone(ctx: PgContext, items: readonly CompleteItem[]): Promise<number> {
  if (items.length === 0) return 0;
  const res = await query(ctx, "complete", {
    name: ctx.asyncOutcomes ? "soniq_complete_async" : "soniq_complete",
    text: COMPLETE(ctx.asyncOutcomes ? ASYNC_COMMIT : ""),
    values: [items.map((i) => i.id), encodeItems(items)],
  });
  return res.rowCount ?? 0;
}

async function deleteDone(ctx: PgContext, items: readonly CompleteItem[]): Promise<number> {
  if (items.length === 0) return 0;
  const res = await query(ctx, "complete", {
    name: ctx.asyncOutcomes ? "soniq_complete_delete_async" : "soniq_complete_delete",
    text: COMPLETE_AND_DELETE(ctx.asyncOutcomes ? ASYNC_COMMIT : ""),
    values: [items.map((i) => i.id), encodeItems(items)],
  });
  return res.rowCount ?? 0;
}

export async function complete(ctx: PgContext, items: readonly CompleteItem[]): Promise<number> {
  validate(items);
  const known = items.filter((item) => isUuid(item.id));
  const kept = known.filter((item) => item.resultTtlMs > 0);
  const deleted = known.filter((item) => item.resultTtlMs === 0);
  const [done, gone] = await Promise.all([markDone(ctx, kept), deleteDone(ctx, deleted)]);
  return done + gone;
}
