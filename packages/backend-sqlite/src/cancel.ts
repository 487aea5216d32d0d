/** Cancel: queued or processing jobs become cancelled (terminal); the worker's late writes are fenced out. */
import type { SqliteContext } from "./context.js";
import { NOW } from "./sql.js";

const CANCEL = `UPDATE soniq_jobs SET status = 'cancelled', updated_at = ${NOW}
  WHERE id = ? AND status IN ('queued', 'processing')`;

/** Cancel a queued or processing job; false when missing or already terminal. */
export function cancel(ctx: SqliteContext, id: string): boolean {
  return ctx.statement(CANCEL).run(id).changes > 0;
}
