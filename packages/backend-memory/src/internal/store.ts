/**
 * The memory backend's state: the three tables as maps, plus the indexes the SQL backends get from
 * their database (the fetch index as per-queue lanes, the partial unique indexes for dedup, the
 * worker_id index, per-queue counters, the expiry index).
 *
 * Every status write goes through `transition`, and every insert through `insertJob`: they are the
 * memory equivalent of the SQL CHECK constraint and terminal-status trigger, and the only places that
 * keep the indexes in step with the rows.
 */
import {
  type AuditEntry,
  type FinishedListener,
  JOB_STATUSES,
  type JobStatus,
  type MetricsRow,
  type QueueSettings,
  type QueueStats,
  SoniqError,
  type StoredFlow,
  type StoredStep,
  type StoredWebhookEndpoint,
  TERMINAL_JOB_STATUSES,
  type WakeUpListener,
} from "@soniq/core/backend";
import { Heap } from "./heap.js";
import { Lane } from "./lanes.js";
import type { DeadLetterRecord, JobPatch, JobRecord, WorkerRecord } from "./rows.js";
import type { JobStepsRecord, SignalBox } from "./step-rows.js";
import type { DeliveryRecord } from "./webhook-rows.js";

export interface StatusCounts {
  queued: number;
  processing: number;
  done: number;
  cancelled: number;
}

export interface TaskNameRecord {
  taskName: string;
  workerId: string;
  lastSeenAt: number;
  version: number | null;
}

export interface LeaseRecord {
  holder: string;
  expiresAt: number;
}

interface ExpiryEntry {
  job: JobRecord;
  expiresAt: number;
}

/** Where a memory backend keeps its store, for `memoryInspector` (internal/inspector.ts); not public API. */
export const STORE: unique symbol = Symbol("soniq.memory.store");

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_JOB_STATUSES);
const STATUSES: ReadonlySet<string> = new Set(JOB_STATUSES);

/** The rule the SQL backends' CHECK constraint and trigger enforce, as one function. */
export function assertStatusWrite(id: string, from: JobStatus | null, to: string): asserts to is JobStatus {
  if (!STATUSES.has(to)) {
    const where = to === "dead_letter" ? " Dead-letter rows live in soniq_dead_letter_jobs." : "";
    throw new SoniqError(
      "SONIQ_INVALID_STATUS_TRANSITION",
      `Job ${id} cannot take status "${to}": a job's status is one of ${JOB_STATUSES.join(", ")}.${where}`,
      { context: { id, from, to } },
    );
  }
  if (from !== null && TERMINAL.has(from) && to !== from) {
    throw new SoniqError(
      "SONIQ_INVALID_STATUS_TRANSITION",
      `Job ${id} is ${from}: a done or cancelled job never changes status (attempted ${to}).`,
      { context: { id, from, to } },
    );
  }
}

export class MemoryStore {
  readonly jobs = new Map<string, JobRecord>();
  readonly deadLetters = new Map<string, DeadLetterRecord>();
  readonly workers = new Map<string, WorkerRecord>();
  readonly taskNames = new Map<string, TaskNameRecord>();
  readonly leases = new Map<string, LeaseRecord>();
  readonly lanes = new Map<string, Lane>();
  /** Queued jobs by dedup key, and by job name + args hash for unique jobs. */
  readonly dedupKeys = new Map<string, JobRecord>();
  readonly uniqueKeys = new Map<string, JobRecord>();
  readonly processingByWorker = new Map<string, Set<JobRecord>>();
  readonly counts = new Map<string, StatusCounts>();
  readonly deadLetterCounts = new Map<string, number>();
  readonly listeners = new Set<WakeUpListener>();
  /** Hear the ids of jobs that finished (done, dead letter, cancelled): `wakeUps.subscribeFinished`. */
  readonly finishedListeners = new Set<FinishedListener>();
  /** `soniq_queues`: queue controls by name. */
  readonly queueSettings = new Map<string, QueueSettings>();
  /** `soniq_queue_starts`: start times per rate-limited queue, oldest first, pruned past the window. */
  readonly queueStarts = new Map<string, number[]>();
  /** `soniq_webhook_endpoints` by id, in creation order. */
  readonly webhookEndpoints = new Map<string, StoredWebhookEndpoint>();
  /** `soniq_webhook_deliveries` by id, in creation order. */
  readonly webhookDeliveries = new Map<string, DeliveryRecord>();
  /** Processing jobs per (queue, group), for `groupConcurrency`. */
  readonly processingByGroup = new Map<string, number>();
  /** `soniq_audit_log`, oldest first. */
  readonly auditLog: AuditEntry[] = [];
  /** `soniq_flows` by id, and `soniq_flow_steps` by flow id then ref (in creation order). */
  readonly flows = new Map<string, StoredFlow>();
  readonly flowSteps = new Map<string, Map<string, StoredStep>>();
  /** `soniq_flows.notified_at` of the flows the `flow.finished` sweep marked (ms). */
  readonly flowsNotified = new Map<string, number>();
  /** The unique index on `soniq_flow_steps.job_id`: current job id -> (flow id, ref). */
  readonly stepsByJob = new Map<string, { flowId: string; ref: string }>();
  /**
   * `soniq_job_steps` by job id (a dead letter keeps its job's id), then occurrence name in `seq` order, and
   * `soniq_job_signals` by job id in insertion order with the unique (job id, key) index (internal/step-rows.ts).
   */
  readonly jobSteps = new Map<string, JobStepsRecord>();
  readonly jobSignals = new Map<string, SignalBox>();
  /** `soniq_metrics` by (minute, queue, job name). */
  readonly metrics = new Map<string, MetricsRow>();
  private readonly expiring = new Heap<ExpiryEntry>((a, b) => a.expiresAt < b.expiresAt);
  private seq = 0;

  constructor(readonly now: () => number) {}

  nextSeq(): number {
    return ++this.seq;
  }

  lane(queue: string): Lane {
    let lane = this.lanes.get(queue);
    if (lane === undefined) {
      lane = new Lane(queue);
      this.lanes.set(queue, lane);
    }
    return lane;
  }

  insertJob(job: JobRecord, now: number): void {
    assertStatusWrite(job.id, null, job.status);
    this.jobs.set(job.id, job);
    this.enter(job, now);
  }

  /**
   * The one guarded status write. `popped` tells the lane the claim already took the job's entry.
   * Throws `SONIQ_INVALID_STATUS_TRANSITION` before changing anything.
   */
  transition(job: JobRecord, to: string, patch: JobPatch, now: number, popped = false): void {
    assertStatusWrite(job.id, job.status, to);
    this.leave(job, popped);
    Object.assign(job, patch);
    job.status = to;
    job.updatedAt = now;
    this.enter(job, now);
  }

  /** Delete the row (result TTL 0, expiry, or the second step of the dead-letter move). */
  removeJob(job: JobRecord): void {
    this.leave(job, false);
    job.live = false;
    this.jobs.delete(job.id);
  }

  addDeadLetter(row: DeadLetterRecord): void {
    this.deadLetters.set(row.id, row);
    this.deadLetterCounts.set(row.queue, (this.deadLetterCounts.get(row.queue) ?? 0) + 1);
  }

  removeDeadLetter(row: DeadLetterRecord): void {
    this.deadLetters.delete(row.id);
    this.deadLetterCounts.set(row.queue, (this.deadLetterCounts.get(row.queue) ?? 1) - 1);
  }

  /** Done rows whose expiry passed, earliest first, removed from the expiry index. */
  *takeExpired(now: number): Generator<JobRecord> {
    for (;;) {
      const top = this.expiring.peek();
      if (top === undefined || top.expiresAt >= now) return;
      this.expiring.pop();
      const job = top.job;
      if (job.live && job.status === "done" && job.expiresAt === top.expiresAt) yield job;
    }
  }

  /** Tell subscribers that `queue` has work. Delivered after the write returns; listener errors are contained. */
  wake(queue: string): void {
    if (this.listeners.size === 0) return;
    queueMicrotask(() => {
      for (const listener of this.listeners) {
        try {
          listener(queue);
        } catch {
          // A wake-up is a hint; a failing listener must not break the write that caused it.
        }
      }
    });
  }

  /** Tell finished-job subscribers about `ids`, after the write returns (as `wake`). */
  finished(ids: readonly string[]): void {
    if (this.finishedListeners.size === 0 || ids.length === 0) return;
    queueMicrotask(() => {
      for (const listener of this.finishedListeners) {
        try {
          listener(ids);
        } catch {
          // A hint; a failing listener must not break the write that caused it.
        }
      }
    });
  }

  /** Job counts of one queue (null: every queue) from the kept counters: O(queues), not O(jobs). */
  stats(queue: string | null): QueueStats {
    const out: QueueStats = { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
    const add = (counts: StatusCounts | undefined, deadLetter: number | undefined) => {
      if (counts !== undefined) {
        out.queued += counts.queued;
        out.processing += counts.processing;
        out.done += counts.done;
        out.cancelled += counts.cancelled;
      }
      out.dead_letter += deadLetter ?? 0;
    };
    if (queue !== null) {
      add(this.counts.get(queue), this.deadLetterCounts.get(queue));
    } else {
      for (const counts of this.counts.values()) add(counts, 0);
      for (const n of this.deadLetterCounts.values()) add(undefined, n);
    }
    out.total = out.queued + out.processing + out.done + out.dead_letter + out.cancelled;
    return out;
  }

  /** The job while it is processing under `attempt` (and, when given, claimed by `workerId`). */
  processingAt(id: string, attempt: number, workerId?: string): JobRecord | undefined {
    const job = this.jobs.get(id);
    if (job === undefined || job.status !== "processing" || job.attempts !== attempt) return undefined;
    return workerId === undefined || job.workerId === workerId ? job : undefined;
  }

  /** Processing jobs of `group` in `queue`. */
  groupProcessing(queue: string, group: string): number {
    return this.processingByGroup.get(groupKey(queue, group)) ?? 0;
  }

  private countGroup(job: JobRecord, delta: number): void {
    if (job.group === null) return;
    const key = groupKey(job.queue, job.group);
    const n = (this.processingByGroup.get(key) ?? 0) + delta;
    if (n === 0) this.processingByGroup.delete(key);
    else this.processingByGroup.set(key, n);
  }

  private countsOf(queue: string): StatusCounts {
    let counts = this.counts.get(queue);
    if (counts === undefined) {
      counts = { queued: 0, processing: 0, done: 0, cancelled: 0 };
      this.counts.set(queue, counts);
    }
    return counts;
  }

  private enter(job: JobRecord, now: number): void {
    this.countsOf(job.queue)[job.status]++;
    if (job.status === "processing") this.countGroup(job, 1);
    if (job.status === "queued") {
      job.queuedVersion++;
      this.lane(job.queue).add(job, now);
      this.claimKeys(job);
    } else if (job.status === "processing" && job.workerId !== null) {
      let set = this.processingByWorker.get(job.workerId);
      if (set === undefined) {
        set = new Set();
        this.processingByWorker.set(job.workerId, set);
      }
      set.add(job);
    } else if (job.status === "done" && job.expiresAt !== null) {
      this.expiring.push({ job, expiresAt: job.expiresAt });
    }
  }

  /**
   * Like the partial unique indexes, one queued job holds a dedup key or unique args. A job coming back
   * to the queue (retry, nack, snooze, recovery) while an equal job was enqueued meanwhile gives up its
   * key rather than fail: the requeue must never be blocked, and the holder keeps deduplicating.
   */
  private claimKeys(job: JobRecord): void {
    if (job.dedupKey !== null) {
      const holder = this.dedupKeys.get(job.dedupKey);
      if (holder === undefined) this.dedupKeys.set(job.dedupKey, job);
      else if (holder !== job) job.dedupKey = null;
    }
    const unique = uniqueKeyOf(job);
    if (unique !== null) {
      const holder = this.uniqueKeys.get(unique);
      if (holder === undefined) this.uniqueKeys.set(unique, job);
      else if (holder !== job) job.uniqueJob = false;
    }
  }

  private leave(job: JobRecord, popped: boolean): void {
    this.countsOf(job.queue)[job.status]--;
    if (job.status === "processing") this.countGroup(job, -1);
    if (job.status === "queued") {
      if (!popped) this.lane(job.queue).forget();
      if (job.dedupKey !== null && this.dedupKeys.get(job.dedupKey) === job)
        this.dedupKeys.delete(job.dedupKey);
      const unique = uniqueKeyOf(job);
      if (unique !== null && this.uniqueKeys.get(unique) === job) this.uniqueKeys.delete(unique);
    } else if (job.status === "processing" && job.workerId !== null) {
      const set = this.processingByWorker.get(job.workerId);
      set?.delete(job);
      if (set?.size === 0) this.processingByWorker.delete(job.workerId);
    }
  }
}

/** The unique-job index key: job name and args hash, for unique jobs with a hash. */
export function uniqueKeyOf(job: {
  uniqueJob: boolean;
  jobName: string;
  argsHash: string | null;
}): string | null {
  return job.uniqueJob && job.argsHash !== null ? `${job.jobName}\u0000${job.argsHash}` : null;
}

function groupKey(queue: string, group: string): string {
  return `${queue}\u0000${group}`;
}
