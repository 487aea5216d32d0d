/** getJob and listJobs (newest first). */
import type { Job, JobStatus, ListJobsFilter } from "@soniq/core";
import { JOB_STATUSES } from "@soniq/core";
import { invalidArgument } from "./errors.js";
import { newestFirst, pageOf } from "./page.js";
import { type JobRecord, toJob } from "./rows.js";
import type { MemoryStore } from "./store.js";

export function getJob(store: MemoryStore, id: string): Job | null {
  const job = store.jobs.get(id);
  return job === undefined ? null : toJob(job);
}

export function listJobs(store: MemoryStore, filter: ListJobsFilter = {}): Job[] {
  const page = pageOf(filter);
  const statuses = statusSet(filter.status);
  const rows: JobRecord[] = [];
  for (const job of store.jobs.values()) {
    if (statuses !== null && !statuses.has(job.status)) continue;
    if (filter.queue !== undefined && job.queue !== filter.queue) continue;
    if (filter.jobName !== undefined && job.jobName !== filter.jobName) continue;
    rows.push(job);
  }
  return newestFirst(rows, (job) => job.createdAt, page).map(toJob);
}

function statusSet(status: ListJobsFilter["status"]): Set<JobStatus> | null {
  if (status === undefined) return null;
  const list: readonly string[] = typeof status === "string" ? [status] : status;
  for (const s of list) {
    if (!(JOB_STATUSES as readonly string[]).includes(s)) {
      throw invalidArgument(
        `Unknown job status "${s}" (one of ${JOB_STATUSES.join(", ")}; dead-letter jobs are listed by listDeadLetterJobs).`,
        { status: s },
      );
    }
  }
  return new Set(list as readonly JobStatus[]);
}
