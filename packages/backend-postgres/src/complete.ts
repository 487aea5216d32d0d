/**
 * Completion, batched: one statement marks every finished job of a flush done (or deletes it when its
 * result TTL is 0). Each item is fenced by `status = 'processing' AND attempts = <the claim's attempt>`,
 * so a late completion after cancel, recovery or a re-claim changes nothing.
 * `j.id = ANY($1)` keeps the primary-key lookup whatever the planner guesses about unnest().
 */
import type { CompleteItem } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";

const COMPLETE = `UPDATE soniq_jobs AS j
SET status = 'done', result = x.result, updated_at = now(),
    expires_at = now() + x.ttl_ms * interval '1 millisecond'
FROM unnest($1::uuid[], $2::int[], $3::jsonb[], $4::float8[]) AS x(id, attempt, result, ttl_ms)
WHERE j.id = ANY($1::uuid[]) AND j.id = x.id AND j.status = 'processing' AND j.attempts = x.attempt`;

const COMPLETE_AND_DELETE = `DELETE FROM soniq_jobs AS j
USING unnest($1::uuid[], $2::int[]) AS x(id, attempt)
WHERE j.id = ANY($1::uuid[]) AND j.id = x.id AND j.status = 'processing' AND j.attempts = x.attempt`;

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

function encodeResult(result: unknown): string | null {
  return result === undefined || result === null ? null : JSON.stringify(result);
}

async function markDone(ctx: PgContext, items: readonly CompleteItem[]): Promise<number> {
  if (items.length === 0) return 0;
  const res = await query(ctx, "complete", {
    name: "soniq_complete",
    text: COMPLETE,
    values: [
      items.map((i) => i.id),
      items.map((i) => i.attempt),
      items.map((i) => encodeResult(i.result)),
      items.map((i) => i.resultTtlMs),
    ],
  });
  return res.rowCount ?? 0;
}

async function deleteDone(ctx: PgContext, items: readonly CompleteItem[]): Promise<number> {
  if (items.length === 0) return 0;
  const res = await query(ctx, "complete", {
    name: "soniq_complete_delete",
    text: COMPLETE_AND_DELETE,
    values: [items.map((i) => i.id), items.map((i) => i.attempt)],
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
