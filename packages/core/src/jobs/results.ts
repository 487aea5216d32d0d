/**
 * `soniq.jobs.waitFor(id)` and `handle.result()`: waiting for a job's terminal outcome, from any process.
 *
 * One `ResultWaiters` per Soniq instance serves every waiter of that instance:
 * - one subscription to the backend's finished-job notifications (`wakeUps.subscribeFinished`: Postgres
 *   LISTEN on the connection its wake-ups already use), taken when the first waiter arrives and dropped
 *   when the last one leaves; a notification re-reads only the ids someone waits for;
 * - one shared poll loop (jittered) re-reading every waited id: every 5 s as a safety net where the
 *   notifications reach every process (or there is only one process, the memory backend), every 250 ms
 *   where they do not (SQLite, Postgres with `listen: "poll"`, or a failed subscription).
 * No waiter owns a connection or a timer loop of its own; its own timer is only its `timeoutMs`.
 *
 * States of one id: pending (queued or processing: keep waiting) -> done | cancelled (in soniq_jobs) or
 * dead_letter (in soniq_dead_letter_jobs): resolve. The job id of a flow step not released yet (`waiting` or
 * `held`: no row until its release) is pending too, and resolves `{ status: "cancelled" }` when the step is
 * cancelled before its release (`flows.stepOfJob`). Any other id in neither table rejects with
 * `SONIQ_JOB_NOT_FOUND` (a wrong id, an enqueue whose transaction has not committed, or a done row already
 * deleted by its `resultTtlMs`). Each waiter also ends on its `timeoutMs` (`SONIQ_TIMEOUT`), its `signal`
 * (rejects with `signal.reason`) or the instance's `close()` (`SONIQ_CLOSED`).
 *
 * While someone waits, the poll timer is ref'd: an awaited `waitFor` keeps the process alive (as `runOnce`
 * does), whatever else is open. It is cleared with the last waiter.
 */

import { SoniqError } from "../common/errors.js";
import { isJobId } from "../common/ids.js";
import type { Logger } from "../common/logger.js";
import type { DeadLetterJob, DeadLetterReason, Job } from "../common/types.js";
import type { EnqueueResult, GuardedBackend } from "../contract/index.js";
import { deadLetterListQuery, jobListQuery } from "./queries.js";

/** A job's terminal outcome. `result` is what the handler returned (as stored: JSON). */
export type JobOutcome<TResult = unknown> =
  | { status: "done"; result: TResult }
  | { status: "dead_letter"; reason: DeadLetterReason; lastError: string | null }
  | { status: "cancelled" };

export interface WaitForOptions {
  /** Reject with `SONIQ_TIMEOUT` after this many milliseconds. Default: wait as long as it takes. */
  timeoutMs?: number;
  /** Reject with `signal.reason` when it aborts (the job itself is not touched). */
  signal?: AbortSignal;
}

/** What `job.enqueue()` (and `soniq.jobs.enqueue`) resolve to: `{ id, deduplicated }` and `result()`. */
export interface EnqueueHandle<TResult = unknown> extends EnqueueResult {
  /** The job's terminal outcome: `soniq.jobs.waitFor(id, options)`, typed by the job's handler. */
  result(options?: WaitForOptions): Promise<JobOutcome<TResult>>;
}

/** Where finished-job notifications reach every process (or there is only one): the poll is a safety net. */
export const SAFETY_POLL_MS = 5000;
/** Without such notifications: how often the shared loop re-reads the waited ids. */
export const FALLBACK_POLL_MS = 250;
/** Reads in flight at once for ids read one by one (the pool serves the rest of the app meanwhile). */
const READS_AT_ONCE = 8;
/** Ids read by one `jobs.list({ ids })` (and one `deadLetters.list({ ids })` for those not in it). */
const IDS_PER_READ = 100;

interface Waiter {
  resolve(outcome: JobOutcome): void;
  reject(err: unknown): void;
}

type Read = JobOutcome | "pending" | "missing";

function jobRead(job: Job): Read {
  if (job.status === "done") return { status: "done", result: job.result ?? null };
  if (job.status === "cancelled") return { status: "cancelled" };
  return "pending";
}

function deadRead(dead: DeadLetterJob): Read {
  return {
    status: "dead_letter",
    reason: dead.deadLetterReason as DeadLetterReason,
    lastError: dead.lastError,
  };
}

function waitOptions(options: unknown): WaitForOptions {
  if (options === undefined) return {};
  const bad = (message: string, key?: string) =>
    new SoniqError("SONIQ_INVALID_ARGUMENT", `waitFor(): ${message}`, { context: { key } });
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw bad("options must be an object { timeoutMs, signal }.");
  }
  const unknown = Object.keys(options).find((k) => k !== "timeoutMs" && k !== "signal");
  if (unknown !== undefined)
    throw bad(`unknown option "${unknown}" (it takes timeoutMs and signal).`, unknown);
  const { timeoutMs, signal } = options as WaitForOptions;
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 0)
  ) {
    throw bad("timeoutMs must be a finite number of milliseconds >= 0.", "timeoutMs");
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw bad("signal must be an AbortSignal.", "signal");
  }
  return { timeoutMs, signal };
}

export class ResultWaiters {
  readonly #waiting = new Map<string, Set<Waiter>>();
  /** The current subscription (its unsubscribe, or null when it failed); null when nobody waits. */
  #subscription: Promise<(() => Promise<void>) | null> | null = null;
  #subscribed = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Ids whose first read is due: read together on the next turn (200 waiters are a few reads, not 200). */
  readonly #firstReads = new Set<string>();

  constructor(
    private readonly backend: GuardedBackend<unknown>,
    private readonly logger: Logger,
  ) {}

  /** Resolves with the job's terminal outcome (see the file comment for how it ends otherwise). */
  waitFor<TResult = unknown>(id: string, options?: WaitForOptions): Promise<JobOutcome<TResult>> {
    let timeoutMs: number | undefined;
    let signal: AbortSignal | undefined;
    try {
      ({ timeoutMs, signal } = waitOptions(options));
      if (typeof id !== "string" || id.length === 0) {
        throw new SoniqError("SONIQ_INVALID_ARGUMENT", "waitFor(id): id must be a job id string.");
      }
      if (this.#closed)
        throw new SoniqError("SONIQ_CLOSED", "Cannot waitFor(): this Soniq instance was closed.");
      signal?.throwIfAborted();
    } catch (err) {
      return Promise.reject(err);
    }
    const key = id.toLowerCase();
    return new Promise<JobOutcome<TResult>>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const end = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#remove(key, waiter);
      };
      const waiter: Waiter = {
        resolve: (outcome) => {
          end();
          resolve(outcome as JobOutcome<TResult>);
        },
        reject: (err) => {
          end();
          reject(err);
        },
      };
      const onAbort = () => waiter.reject(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(
          () =>
            waiter.reject(
              new SoniqError(
                "SONIQ_TIMEOUT",
                `waitFor(): job ${id} did not finish within ${timeoutMs} ms (it keeps running; wait again or cancel it).`,
                { context: { id, timeoutMs } },
              ),
            ),
          timeoutMs,
        );
        timer.unref();
      }
      this.#add(key, waiter);
      // Listening first, then the first read: a job finishing in between is seen by one or the other.
      void this.#subscribe().then(() => this.#readFirst(key));
    });
  }

  /** Re-reads every waited id now (after a change no finished-job notification reports). */
  recheck(): void {
    if (this.#waiting.size > 0) void this.#check([...this.#waiting.keys()]);
  }

  /** Rejects every waiter with `SONIQ_CLOSED` and drops the subscription. */
  async close(): Promise<void> {
    this.#closed = true;
    const err = new SoniqError("SONIQ_CLOSED", "waitFor(): this Soniq instance was closed while waiting.");
    for (const waiters of [...this.#waiting.values()]) for (const w of [...waiters]) w.reject(err);
    await this.#idle();
  }

  #add(id: string, waiter: Waiter): void {
    let set = this.#waiting.get(id);
    if (!set) {
      set = new Set();
      this.#waiting.set(id, set);
    }
    set.add(waiter);
  }

  #remove(id: string, waiter: Waiter): void {
    const set = this.#waiting.get(id);
    if (!set?.delete(waiter)) return;
    if (set.size === 0) this.#waiting.delete(id);
    if (this.#waiting.size === 0) void this.#idle();
  }

  #subscribe(): Promise<unknown> {
    if (this.#subscription) return this.#subscription;
    this.#subscription = this.backend.wakeUps
      .subscribeFinished((ids) => this.#finished(ids))
      .then(
        (unsubscribe) => {
          this.#subscribed = true;
          return unsubscribe;
        },
        (err: unknown) => {
          this.logger.warn({ err }, "waitFor: no finished-job notifications; polling every 250 ms");
          this.#subscribed = false;
          return null;
        },
      );
    const subscription = this.#subscription;
    void subscription.then(() => {
      if (this.#subscription === subscription) this.#schedulePoll();
    });
    return subscription;
  }

  /** Nobody waits: stop polling and unsubscribe. */
  async #idle(): Promise<void> {
    if (this.#waiting.size > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const subscription = this.#subscription;
    this.#subscription = null;
    this.#subscribed = false;
    const unsubscribe = await subscription;
    await unsubscribe?.().catch((err: unknown) => this.logger.warn({ err }, "waitFor: unsubscribe failed"));
  }

  #pollMs(): number {
    const { notify, multiProcess } = this.backend.capabilities;
    return this.#subscribed && (notify || !multiProcess) ? SAFETY_POLL_MS : FALLBACK_POLL_MS;
  }

  #schedulePoll(): void {
    if (this.#timer || this.#waiting.size === 0) return;
    const base = this.#pollMs();
    // Jittered, so many processes waiting on one database do not read in step.
    this.#timer = setTimeout(
      () => {
        void this.#check([...this.#waiting.keys()]).finally(() => {
          this.#timer = undefined;
          this.#schedulePoll();
        });
      },
      base * (0.8 + Math.random() * 0.4),
    );
  }

  #finished(ids: readonly string[]): void {
    const waited = ids.map((id) => id.toLowerCase()).filter((id) => this.#waiting.has(id));
    if (waited.length > 0) void this.#check(waited);
  }

  /** Queues `id`'s first read; the ids queued in the same turn are read together. */
  #readFirst(id: string): void {
    if (this.#firstReads.size === 0) {
      setImmediate(() => {
        const ids = [...this.#firstReads];
        this.#firstReads.clear();
        void this.#check(ids);
      });
    }
    this.#firstReads.add(id);
  }

  /**
   * Reads the ids and ends the waiters of each that finished or is missing: job ids in batches (one
   * `jobs.list({ ids })` and one `deadLetters.list({ ids })` for a hundred), anything else one by one.
   */
  async #check(ids: readonly string[]): Promise<void> {
    const waited = ids.filter((id) => this.#waiting.has(id));
    const batched = waited.filter((id) => isJobId(id));
    for (let i = 0; i < batched.length; i += IDS_PER_READ) {
      const chunk = batched.slice(i, i + IDS_PER_READ);
      let reads: Map<string, Read>;
      try {
        reads = await this.#readMany(chunk);
      } catch (err) {
        // A failed read is retried by the next poll; the waiters' own timeouts still apply.
        this.logger.warn(
          { err, jobIds: chunk },
          "waitFor: reading the jobs failed; retrying at the next poll",
        );
        continue;
      }
      for (const [id, read] of reads) this.#end(id, read);
    }
    const single = waited.filter((id) => !isJobId(id));
    for (let i = 0; i < single.length; i += READS_AT_ONCE) {
      await Promise.all(single.slice(i, i + READS_AT_ONCE).map((id) => this.#checkOne(id)));
    }
  }

  /** The ids' states: their job rows, then the dead letters of the ids not found, then flow steps one by one. */
  async #readMany(ids: readonly string[]): Promise<Map<string, Read>> {
    const reads = new Map<string, Read>();
    const jobs = await this.backend.jobs.list(jobListQuery({ ids, limit: ids.length }));
    for (const job of jobs) reads.set(job.id, jobRead(job));
    // Not in soniq_jobs: moved to the dead-letter table (the move is atomic, so it is there now), or absent.
    const rest = ids.filter((id) => !reads.has(id));
    if (rest.length > 0) {
      const dead = await this.backend.deadLetters.list(
        deadLetterListQuery({ ids: rest, limit: rest.length }),
      );
      for (const row of dead) reads.set(row.id, deadRead(row));
    }
    const absent = ids.filter((id) => !reads.has(id));
    for (let i = 0; i < absent.length; i += READS_AT_ONCE) {
      const chunk = absent.slice(i, i + READS_AT_ONCE);
      const steps = await Promise.all(chunk.map((id) => this.#readStep(id, false)));
      for (const [k, id] of chunk.entries()) reads.set(id, steps[k] ?? "missing");
    }
    return reads;
  }

  async #checkOne(id: string): Promise<void> {
    if (!this.#waiting.has(id)) return;
    let read: Read;
    try {
      read = await this.#read(id);
    } catch (err) {
      // A failed read is retried by the next poll; the waiters' own timeouts still apply.
      this.logger.warn({ err, jobId: id }, "waitFor: reading the job failed; retrying at the next poll");
      return;
    }
    this.#end(id, read);
  }

  /** Ends the waiters of `id` when `read` is an outcome or says the job is missing. */
  #end(id: string, read: Read): void {
    if (read === "pending" || !this.#waiting.has(id)) return;
    const waiters = [...(this.#waiting.get(id) ?? [])];
    if (read === "missing") {
      const err = new SoniqError(
        "SONIQ_JOB_NOT_FOUND",
        `waitFor(): no job ${id} in soniq_jobs or soniq_dead_letter_jobs. Check the id; an enqueue inside a transaction is visible once it commits, and a done job's row is deleted after its resultTtlMs (at once with 0), so wait before that.`,
        { context: { id } },
      );
      for (const w of waiters) w.reject(err);
      return;
    }
    for (const w of waiters) w.resolve(read);
  }

  async #read(id: string, again = false): Promise<Read> {
    const job = await this.backend.jobs.get(id);
    if (job) return jobRead(job);
    // Not in soniq_jobs: moved to the dead-letter table (the move is atomic, so it is there now), or absent.
    const dead = await this.backend.deadLetters.get(id);
    return dead ? deadRead(dead) : this.#readStep(id, again);
  }

  /**
   * No row in either table: a flow step's job id (minted at start, its row inserted on release) is pending
   * while the step waits or is held, and cancelled when the step was cancelled before its release. Queued
   * or processing means the release committed after the reads above: the next read finds the row. Done or
   * dead-lettered means the job was released, ran and finished between those reads and this one; its outcome
   * committed with the step's state, so the job is read once more (absent then only if it is gone: a done row
   * with `resultTtlMs` 0, a purged dead letter).
   */
  async #readStep(id: string, again: boolean): Promise<Read> {
    const match = this.backend.supports("flows") ? await this.backend.flows.stepOfJob(id) : null;
    if (match === null || match.step.jobId !== id) return "missing";
    switch (match.step.state) {
      case "waiting":
      case "held":
      case "queued":
      case "processing":
        return "pending";
      case "cancelled":
        return { status: "cancelled" };
      case "done":
      case "dead_lettered":
        return again ? "missing" : this.#read(id, true);
      default:
        return "missing";
    }
  }
}

/**
 * `{ id, deduplicated }` with `result()` on its prototype (a getter), so it still serialises, spreads and
 * compares (`toEqual`) as `{ id, deduplicated }`. A class, not `Object.defineProperty` on the backend's result: that
 * redefinition and its closure were a sixth of core's cost per job of a bulk enqueue (bench/README.md).
 */
class Enqueued<TResult> implements EnqueueHandle<TResult> {
  readonly id: string;
  readonly deduplicated: boolean;
  readonly #waiters: ResultWaiters;

  constructor(enqueued: EnqueueResult, waiters: ResultWaiters) {
    this.id = enqueued.id;
    this.deduplicated = enqueued.deduplicated;
    this.#waiters = waiters;
  }

  /** A getter, so `const { result } = handle` still works detached: the function is made when it is read. */
  get result(): (options?: WaitForOptions) => Promise<JobOutcome<TResult>> {
    return (options) => this.#waiters.waitFor<TResult>(this.id, options);
  }
}

/** What an enqueue resolves to: the backend's `{ id, deduplicated }` with `result()`. */
export function enqueueHandle<TResult>(
  enqueued: EnqueueResult,
  waiters: ResultWaiters,
): EnqueueHandle<TResult> {
  return new Enqueued<TResult>(enqueued, waiters);
}
