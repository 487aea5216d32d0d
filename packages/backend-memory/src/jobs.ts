/**
 * The jobs facet: enqueue (single and batched; the write is internal/enqueue.ts, shared with schedules),
 * reads, stats, cancel and expiry.
 */
import {
  type EnqueueResult,
  finishStep,
  type Job,
  type JobListQuery,
  type JobsFacet,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { enqueueMany } from "./internal/enqueue.js";
import { runFlow } from "./internal/flow-store.js";
import { idSet, textSearch } from "./internal/list-filters.js";
import { type JobRecord, newestFirst, toJob } from "./internal/rows.js";
import { deleteSteps } from "./internal/step-rows.js";
import type { MemoryStore } from "./internal/store.js";

export function jobsFacet(store: MemoryStore): JobsFacet<never> {
  return {
    enqueue: async (job, options) => enqueueMany(store, [job], options)[0] as EnqueueResult,
    enqueueMany: async (jobs, options) => enqueueMany(store, jobs, options),
    get: async (id) => {
      const job = store.jobs.get(id);
      return job === undefined ? null : toJob(job);
    },
    list: async (query) => list(store, query),
    stats: async (query) => store.stats(query.queue),
    cancel: async (id, audit) => {
      const job = store.jobs.get(id);
      if (job === undefined || (job.status !== "queued" && job.status !== "processing")) return false;
      store.transition(job, "cancelled", {}, store.now());
      if (job.flowId !== null && job.stepRef !== null) {
        runFlow(store, finishStep(job.flowId, job.stepRef, job.id, "cancelled", [], new Date(store.now())));
      }
      if (audit) writeAudit(store, audit);
      store.finished([id]);
      return true;
    },
    deleteExpired: async () => {
      let deleted = 0;
      const now = store.now();
      const kept: JobRecord[] = [];
      for (const job of store.takeExpired(now)) {
        if (inOpenFlow(store, job)) kept.push(job);
        else {
          store.removeJob(job);
          deleteSteps(store, job.id);
          deleted++;
        }
      }
      // A step's result is kept while its flow is open (a dependent reads it); looked at again later.
      for (const job of kept) store.transition(job, "done", { expiresAt: now + KEEP_FLOW_RESULT_MS }, now);
      return deleted;
    },
  };
}

/** How long an expired step result of an open flow is kept before expiry looks at it again. */
const KEEP_FLOW_RESULT_MS = 60_000;

function inOpenFlow(store: MemoryStore, job: JobRecord): boolean {
  if (job.flowId === null) return false;
  const state = store.flows.get(job.flowId)?.state;
  return state === "running" || state === "held";
}

function list(store: MemoryStore, query: JobListQuery): Job[] {
  const statuses = query.statuses === null ? null : new Set<string>(query.statuses);
  const ids = idSet(query.ids);
  const search = textSearch(query.q);
  const rows: JobRecord[] = [];
  for (const job of store.jobs.values()) {
    if (statuses !== null && !statuses.has(job.status)) continue;
    if (query.queue !== null && job.queue !== query.queue) continue;
    if (query.jobName !== null && job.jobName !== query.jobName) continue;
    if (ids !== null && !ids.has(job.id)) continue;
    if (search !== null && !search(job)) continue;
    rows.push(job);
  }
  // By id alone (UUIDv7, time-ordered), as the SQL backends read their primary key (core/src/contract/jobs.ts).
  return newestFirst(rows, null, query).map(toJob);
}
