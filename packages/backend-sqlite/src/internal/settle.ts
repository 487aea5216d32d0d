/**
 * The settle's writes (`runs.settle`, and `steps.completeInTransaction`'s done item), built once: each item is
 * fenced by (id, attempt) and, when the call names its worker, by the row's worker, so a late write after cancel,
 * recovery or a re-claim changes nothing and reports false. A batch is split at its transaction: the caller
 * opens it and runs `write` inside, then `announce`s after the commit.
 */
import {
  type DeadLetterSettlement,
  type DoneSettlement,
  type RequeueSettlement,
  type Settlement,
  settleFlows,
} from "@soniq/core/backend";
import type { SqliteContext } from "./context.js";
import { runFlow } from "./flow-store.js";
import { jsonOrNull, NOW, RELEASE_TAKEN_KEYS } from "./sql.js";
import { writeDeliveries } from "./webhook-rows.js";

/** A worker-side write's fence on `soniq_jobs` (`@workerId` null: not fenced by worker). */
export const FENCE =
  "id = @id AND status = 'processing' AND attempts = @attempt AND (@workerId IS NULL OR worker_id = @workerId)";

const DONE = `UPDATE soniq_jobs
  SET status = 'done', result = @result, expires_at = ${NOW} + @ttl, updated_at = ${NOW}
  WHERE ${FENCE}`;
const DONE_DELETE = `DELETE FROM soniq_jobs WHERE ${FENCE}`;

// A requeued job gives up a dedup_key or unique args that another queued job took meanwhile.
const REQUEUE = `UPDATE soniq_jobs
  SET status = 'queued', attempts = @attempts, last_error = COALESCE(@lastError, last_error),
    worker_id = NULL, scheduled_at = ${NOW} + @delayMs, updated_at = ${NOW}, ${RELEASE_TAKEN_KEYS}
  WHERE ${FENCE} RETURNING queue`;

const HAS_DEAD_LETTER_ROW = "SELECT 1 FROM soniq_dead_letter_jobs WHERE id = ?";
const MOVE_INSERT = `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts,
    attempts, last_error, dead_letter_reason, tags, resurrection_count, original_created_at,
    moved_to_dead_letter_at, created_at, flow_id, step_ref, args_version, trace_id, trace_context)
  SELECT id, job_name, args, queue, priority, max_attempts, attempts, @error, @reason, @tags, 0,
    created_at, ${NOW}, ${NOW}, flow_id, step_ref, args_version, trace_id, trace_context
  FROM soniq_jobs WHERE ${FENCE}`;
const MOVE_DELETE = "DELETE FROM soniq_jobs WHERE id = ?";

/**
 * One item as a step of the settle transaction. Its JSON is encoded when the step is built, before the
 * transaction opens, so a value JSON cannot encode rejects the call with nothing written.
 */
type Step = () => boolean;

/** The named parameters of an item's fence (`workerId` null: not fenced by worker). */
interface Fence {
  id: string;
  attempt: number;
  workerId: string | null;
}

function doneStep(ctx: SqliteContext, item: DoneSettlement, workerId: string | null): Step {
  const fence: Fence = { id: item.id, attempt: item.attempt, workerId };
  if (item.resultTtlMs === 0) return () => ctx.statement(DONE_DELETE).run(fence).changes > 0;
  const params = { ...fence, result: jsonOrNull(item.result, "result"), ttl: item.resultTtlMs };
  return () => ctx.statement(DONE).run(params).changes > 0;
}

/** `wake` collects the queues of jobs requeued due now, to notify after the commit. */
function requeueStep(
  ctx: SqliteContext,
  item: RequeueSettlement,
  workerId: string | null,
  wake: Set<string>,
): Step {
  const { id, attempt, attempts, lastError, delayMs } = item;
  const params = { id, attempt, workerId, attempts, lastError, delayMs };
  return () => {
    const row = ctx.statement(REQUEUE).get(params) as { queue: string } | undefined;
    if (row && delayMs === 0) wake.add(row.queue);
    return row !== undefined;
  };
}

function deadLetterStep(ctx: SqliteContext, item: DeadLetterSettlement, workerId: string | null): Step {
  const { id, attempt, reason, error } = item;
  const params = { id, attempt, workerId, reason, error, tags: jsonOrNull(item.tags, "tags") };
  return () => {
    // Checked first (the write lock is held): a conflicting row leaves this job where it is.
    if (ctx.statement(HAS_DEAD_LETTER_ROW).get(id) !== undefined) return false;
    if (ctx.statement(MOVE_INSERT).run(params).changes === 0) return false;
    ctx.statement(MOVE_DELETE).run(id);
    return true;
  };
}

/**
 * A settle, split at its transaction: `write` inside one the caller opened (the settle's own IMMEDIATE one, or
 * `steps.completeInTransaction`'s around the handler's writes), `announce` once it committed.
 */
export interface SettleBatch {
  /**
   * The items' fenced writes, one flag per item; an applied item's webhook deliveries are inserted with it (an
   * outbox), and so are the flow steps it ended: their done, added steps and dependents' releases (core's
   * settleFlows).
   */
  write(): boolean[];
  /** After the commit: wakes workers for jobs requeued due now, tells waiters which jobs finished. */
  announce(applied: readonly boolean[]): void;
}

/**
 * The items' JSON is encoded here: `runs.settle` builds the batch before its transaction opens, so a value JSON
 * cannot encode writes nothing.
 */
export function settleBatch(
  ctx: SqliteContext,
  items: readonly Settlement[],
  workerId: string | null,
): SettleBatch {
  const wake = new Set<string>();
  const steps = items.map((item): Step => {
    if (item.kind === "done") return doneStep(ctx, item, workerId);
    if (item.kind === "requeue") return requeueStep(ctx, item, workerId, wake);
    return deadLetterStep(ctx, item, workerId);
  });
  return {
    write: () => {
      const flags = steps.map((step, i) => {
        const done = step();
        if (done) writeDeliveries(ctx, items[i]?.deliveries);
        return done;
      });
      const flows = settleFlows(items, flags, () => new Date());
      if (flows !== null) runFlow(ctx, flows);
      return flags;
    },
    announce: (applied) => {
      for (const queue of wake) ctx.notify(queue);
      ctx.finished(items.filter((item, i) => applied[i] && item.kind !== "requeue").map((item) => item.id));
    },
  };
}
