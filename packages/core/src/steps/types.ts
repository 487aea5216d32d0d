/** The durable-step words a job context names (DESIGN.md section 19); the behaviour is in run.ts. */

/** What `ctx.complete` returns: the handler returns it, and the worker writes nothing more (done already). */
export interface Completed {
  readonly [COMPLETED]: true;
  readonly result: unknown;
}
export const COMPLETED = Symbol.for("soniq.completed");

/** `ctx.step`'s options. */
export interface StepOptions {
  /**
   * Run the function inside a transaction of the backend's connection to the application's database, and
   * commit the checkpoint in it (Postgres: a `pg` client inside BEGIN; SQLite: the better-sqlite3 database inside
   * BEGIN IMMEDIATE, the function synchronous; memory: applied after the function).
   */
  transaction?: boolean;
}

/** `ctx.waitForSignal`'s options. */
export interface WaitForSignalOptions {
  /** Required: at most 365 days. On timeout the call returns null (recorded `timed_out`). */
  timeoutMs: number;
}
