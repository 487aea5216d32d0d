/**
 * `soniq.jobs.explain(id)`: why a job is (not) running. Reads only (jobs, dead letters, queue controls,
 * workers, task names) and names every cause that applies, with the evidence it found. Clock-based
 * reasons (scheduled, backoff, staleness) use this process's clock.
 */

import type { Job, JobStatus, JobStep } from "../common/types.js";
import type { GuardedBackend } from "../contract/index.js";
import { explainStep } from "../flows/explain.js";
import { occurrenceBase } from "../steps/programs.js";
import { DEFAULT_HEARTBEAT_INTERVAL_MS, suspectAfterMs } from "../worker/liveness.js";
import { listWorkerViews, type WorkerView } from "../worker/service.js";
import { MAX_PAGE_SIZE } from "./queries.js";

export const EXPLAIN_CODES = [
  "not_found",
  "done",
  "cancelled",
  "dead_lettered",
  "running",
  "scheduled_in_future",
  "retry_backoff",
  "queue_paused",
  "queue_concurrency_full",
  "group_concurrency_full",
  "rate_limited",
  "no_worker_for_queue",
  "no_handler_for_job",
  "held_by_stale_worker",
  "waiting_behind",
  "waiting_on_parents",
  "held_by_dead_letter",
  "sleeping",
  "waiting_for_signal",
  "newer_version",
] as const;

export type ExplainCode = (typeof EXPLAIN_CODES)[number];

export interface ExplainReason {
  code: ExplainCode;
  message: string;
  evidence: Record<string, unknown>;
}

export interface Explanation {
  /**
   * The job's status, `"dead_letter"` for a dead-lettered one, `"waiting"` or `"held"` for a flow step whose
   * job is not released yet (its id minted at start), null when nothing has the id.
   */
  status: JobStatus | "dead_letter" | "waiting" | "held" | null;
  /**
   * One word: the terminal code (`not_found`, `done`, `cancelled`, `dead_lettered`), `running`, `stuck`
   * (held by a stale worker), `blocked` (paused, full, rate limited, nobody to run it), `scheduled`
   * (not due yet), `ready` (due; at most waiting behind others), or for a flow step not released yet
   * `waiting` (on its parents) or `held` (a parent's dead letter needs an operator).
   */
  verdict: string;
  reasons: ExplainReason[];
}

const BLOCKING: readonly ExplainCode[] = [
  "queue_paused",
  "queue_concurrency_full",
  "group_concurrency_full",
  "rate_limited",
  "no_worker_for_queue",
  "no_handler_for_job",
  "newer_version",
];

function reason(code: ExplainCode, message: string, evidence: Record<string, unknown> = {}): ExplainReason {
  return { code, message, evidence };
}

function withTrace(explanation: Explanation, traceId: string | null): Explanation {
  if (traceId !== null) for (const r of explanation.reasons) r.evidence.traceId = traceId;
  return explanation;
}

/** A span as people read it in explain messages: "850 ms", "42 s". */
function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`;
}

export class Explainer {
  constructor(
    private readonly backend: GuardedBackend<unknown>,
    private readonly staleAfterMs: number,
    private readonly heartbeatIntervalMs: number = DEFAULT_HEARTBEAT_INTERVAL_MS,
  ) {}

  /** Every reason's evidence names the job's trace (`traceId`) when it was enqueued under one. */
  async explain(id: string): Promise<Explanation> {
    const job = await this.backend.jobs.get(id);
    if (job === null) return this.#missing(id);
    return withTrace(await this.#explainJob(job), job.traceId);
  }

  async #explainJob(job: Job): Promise<Explanation> {
    if (job.status === "done") {
      return {
        status: "done",
        verdict: "done",
        reasons: [reason("done", "The job finished.", { at: job.updatedAt })],
      };
    }
    if (job.status === "cancelled") {
      const r = reason("cancelled", "The job was cancelled.", { at: job.updatedAt });
      return { status: "cancelled", verdict: "cancelled", reasons: [r] };
    }
    const now = Date.now();
    const workers = await listWorkerViews(this.backend, now, this.staleAfterMs);
    if (job.status === "processing") return this.#processing(job, workers, now);
    return this.#queued(job, workers, now);
  }

  async #missing(id: string): Promise<Explanation> {
    const dead = await this.backend.deadLetters.get(id);
    if (dead === null) {
      const step = await explainStep(this.backend, id);
      if (step !== null) return step;
      const r = reason("not_found", `No job or dead letter has the id ${id}.`, { id });
      return { status: null, verdict: "not_found", reasons: [r] };
    }
    const r = reason("dead_lettered", `The job was dead-lettered (${dead.deadLetterReason}).`, {
      reason: dead.deadLetterReason,
      lastError: dead.lastError,
      at: dead.movedToDeadLetterAt,
      attempts: dead.attempts,
    });
    return withTrace({ status: "dead_letter", verdict: "dead_lettered", reasons: [r] }, dead.traceId);
  }

  #processing(job: Job, workers: WorkerView[], now: number): Explanation {
    const worker = workers.find((w) => w.id === job.workerId);
    const where = worker
      ? { workerId: worker.id, hostname: worker.hostname, pid: worker.pid }
      : { workerId: job.workerId };
    const reasons = [this.#running(job, worker, where, now)];
    if (job.workerId !== null && (worker === undefined || worker.state !== "live")) {
      const beat = worker?.lastHeartbeat ?? null;
      reasons.push(
        reason(
          "held_by_stale_worker",
          "The worker holding the job is stale or stopped; recovery will requeue it.",
          {
            workerId: job.workerId,
            workerStatus: worker?.status ?? null,
            workerState: worker?.state ?? null,
            lastHeartbeat: beat,
            heartbeatAgeMs: beat === null ? null : Math.max(0, now - beat.getTime()),
            recoveryDueAt: beat === null ? null : new Date(beat.getTime() + this.staleAfterMs),
          },
        ),
      );
    }
    return { status: "processing", verdict: reasons.length > 1 ? "stuck" : "running", reasons };
  }

  /**
   * `running`, with the holder's heartbeat age and, once it exceeds three heartbeat intervals (well before
   * `staleAfterMs`), a `suspect` note: the worker may be dead or blocked, and when recovery would requeue the
   * job. A killed worker thus shows as suspect within seconds, not only once it is stale.
   */
  #running(
    job: Job,
    worker: WorkerView | undefined,
    where: Record<string, unknown>,
    now: number,
  ): ExplainReason {
    const since = `Running since ${job.updatedAt.toISOString()}`;
    if (worker === undefined) return reason("running", `${since}.`, { ...where, since: job.updatedAt });
    const heartbeatAgeMs = Math.max(0, now - worker.lastHeartbeat.getTime());
    const recoveryDueAt = new Date(worker.lastHeartbeat.getTime() + this.staleAfterMs);
    const suspect =
      worker.state === "live" && heartbeatAgeMs > suspectAfterMs(this.heartbeatIntervalMs, this.staleAfterMs)
        ? `no heartbeat for ${seconds(heartbeatAgeMs)} (expected every ${seconds(this.heartbeatIntervalMs)}): ` +
          `the worker may be dead or blocked; recovery requeues the job at ${recoveryDueAt.toISOString()} ` +
          `unless it beats again`
        : null;
    const beat = `last heartbeat ${seconds(heartbeatAgeMs)} ago`;
    return reason("running", suspect ? `${since}; suspect: ${suspect}.` : `${since}; ${beat}.`, {
      ...where,
      since: job.updatedAt,
      lastHeartbeat: worker.lastHeartbeat,
      heartbeatAgeMs,
      staleAfterMs: this.staleAfterMs,
      suspect,
    });
  }

  async #queued(job: Job, workers: WorkerView[], now: number): Promise<Explanation> {
    const reasons: ExplainReason[] = [];
    const due = job.scheduledAt.getTime() <= now;
    const waiting = due ? undefined : await this.#waitingStep(job);
    if (waiting !== undefined) {
      reasons.push(
        waiting.kind === "sleep"
          ? reason("sleeping", `Sleeping at step "${waiting.name}" until ${job.scheduledAt.toISOString()}.`, {
              step: waiting.name,
              wakeAt: waiting.wakeAt,
            })
          : reason(
              "waiting_for_signal",
              `Waiting for the signal "${occurrenceBase(waiting.name)}" (step "${waiting.name}") until ${waiting.wakeAt?.toISOString()}; send it with soniq.jobs.signal().`,
              { step: waiting.name, signal: occurrenceBase(waiting.name), deadline: waiting.wakeAt },
            ),
      );
    } else if (!due && job.attempts > 0) {
      reasons.push(
        reason(
          "retry_backoff",
          `Retrying: attempt ${job.attempts + 1} of ${job.maxAttempts} after a backoff.`,
          {
            attempt: job.attempts + 1,
            maxAttempts: job.maxAttempts,
            until: job.scheduledAt,
            lastError: job.lastError,
          },
        ),
      );
    } else if (!due) {
      reasons.push(
        reason("scheduled_in_future", `Scheduled for ${job.scheduledAt.toISOString()}.`, {
          until: job.scheduledAt,
        }),
      );
    }
    reasons.push(...(await this.#controls(job)));
    reasons.push(...this.#runners(job, workers));
    if (due) reasons.push(...(await this.#ahead(job, now)));
    const verdict = reasons.some((r) => BLOCKING.includes(r.code)) ? "blocked" : due ? "ready" : "scheduled";
    return { status: "queued", verdict, reasons };
  }

  /** The sleep or signal wait a queued job is suspended at (its latest `waiting` checkpoint), if any. */
  async #waitingStep(job: Job): Promise<JobStep | undefined> {
    if (!this.backend.supports("steps")) return undefined;
    const steps = await this.backend.steps.list(job.id);
    return steps.filter((s) => s.state === "waiting" && s.kind !== "step").at(-1);
  }

  async #controls(job: Job): Promise<ExplainReason[]> {
    // Without the queues capability there are no pauses or limits to explain.
    if (!this.backend.supports("queues")) return [];
    const s = await this.backend.queues.get(job.queue);
    const out: ExplainReason[] = [];
    if (s.paused)
      out.push(
        reason("queue_paused", `The queue "${job.queue}" is paused.`, {
          queue: job.queue,
          since: s.pausedAt,
        }),
      );
    if (s.concurrency === null && s.groupConcurrency === null && s.rateLimit === null) return out;
    const running = await this.backend.jobs.list({
      statuses: ["processing"],
      queue: job.queue,
      jobName: null,
      q: null,
      ids: null,
      limit: MAX_PAGE_SIZE,
      offset: 0,
      position: null,
    });
    const holders = (jobs: Job[]) =>
      jobs.slice(0, 20).map((j) => ({ id: j.id, workerId: j.workerId, since: j.updatedAt }));
    if (s.concurrency !== null && running.length >= s.concurrency) {
      out.push(
        reason("queue_concurrency_full", `All ${s.concurrency} slots of "${job.queue}" are taken.`, {
          concurrency: s.concurrency,
          processing: running.length,
          holders: holders(running),
        }),
      );
    }
    if (s.groupConcurrency !== null && job.group !== null) {
      const inGroup = running.filter((j) => j.group === job.group);
      if (inGroup.length >= s.groupConcurrency) {
        out.push(
          reason(
            "group_concurrency_full",
            `All ${s.groupConcurrency} slots of group "${job.group}" are taken.`,
            {
              group: job.group,
              groupConcurrency: s.groupConcurrency,
              processing: inGroup.length,
              holders: holders(inGroup),
            },
          ),
        );
      }
    }
    if (s.rateLimit !== null) {
      const starts = await this.backend.queues.recentStarts(job.queue, s.rateLimit.perMs);
      if (starts.count >= s.rateLimit.max) {
        const until =
          starts.oldestAt === null ? null : new Date(starts.oldestAt.getTime() + s.rateLimit.perMs);
        out.push(
          reason(
            "rate_limited",
            `"${job.queue}" used its ${s.rateLimit.max} starts per ${s.rateLimit.perMs} ms.`,
            {
              ...s.rateLimit,
              starts: starts.count,
              until,
            },
          ),
        );
      }
    }
    return out;
  }

  #runners(job: Job, workers: WorkerView[]): ExplainReason[] {
    const live = workers.filter((w) => w.state === "live");
    const serving = live.filter((w) => w.queues.length === 0 || w.queues.includes(job.queue));
    const out: ExplainReason[] = [];
    if (serving.length === 0) {
      out.push(
        reason("no_worker_for_queue", `No live worker takes jobs from "${job.queue}".`, {
          queue: job.queue,
          liveWorkers: live.length,
        }),
      );
    }
    const handlers = live.filter((w) => w.jobNames.includes(job.jobName));
    if (handlers.length === 0) {
      out.push(
        reason("no_handler_for_job", `No live worker has a handler for "${job.jobName}".`, {
          jobName: job.jobName,
        }),
      );
    } else if (job.argsVersion !== null) {
      // A rolling deploy: the job's args are newer than every live handler's (each gives the job back).
      const served = [...new Set(handlers.map((w) => w.jobVersions[job.jobName] ?? 1))].sort((a, b) => a - b);
      const version = job.argsVersion;
      if (served.every((v) => v < version)) {
        out.push(
          reason(
            "newer_version",
            `The job's args are version ${version}; the live workers' handlers for "${job.jobName}" take ${served.join(", ")}: it waits for a worker on the new code.`,
            { jobName: job.jobName, version, workerVersions: served },
          ),
        );
      }
    }
    return out;
  }

  async #ahead(job: Job, now: number): Promise<ExplainReason[]> {
    const queued = await this.backend.jobs.list({
      statuses: ["queued"],
      queue: job.queue,
      jobName: null,
      q: null,
      ids: null,
      limit: MAX_PAGE_SIZE,
      offset: 0,
      position: null,
    });
    const ahead = queued.filter(
      (j) =>
        j.id !== job.id &&
        j.scheduledAt.getTime() <= now &&
        (j.priority < job.priority ||
          (j.priority === job.priority &&
            (j.scheduledAt < job.scheduledAt ||
              (j.scheduledAt.getTime() === job.scheduledAt.getTime() && j.createdAt <= job.createdAt)))),
    );
    if (ahead.length === 0) return [];
    return [
      reason("waiting_behind", `${ahead.length} ready jobs of higher or equal priority come first.`, {
        ahead: ahead.length,
        // Counted among the queue's newest queued jobs (one page).
        capped: queued.length >= MAX_PAGE_SIZE,
      }),
    ];
  }
}
