/** Jobs as the pages and the API read them: filtered, searched, paged; one job with its explain verdict. */

import type { Explanation, Job, JobStatus, Soniq } from "@soniq/core";
import { isJobId } from "@soniq/core";
import { notFound } from "../errors.js";
import { type Cursor, keysetPage, type Page } from "../paging.js";

export interface JobQuery {
  status?: JobStatus[] | undefined;
  queue?: string | undefined;
  name?: string | undefined;
  /** Search: an exact id, or text in the id, name or last error. */
  q?: string | undefined;
  limit: number;
  cursor?: Cursor | undefined;
}

function matchesFilters(job: Job, query: JobQuery): boolean {
  return (
    (!query.status || query.status.includes(job.status)) &&
    (!query.queue || job.queue === query.queue) &&
    (!query.name || job.jobName === query.name)
  );
}

export function textMatcher(
  q: string,
): (row: { id: string; jobName: string; lastError: string | null }) => boolean {
  const needle = q.toLowerCase();
  return (row) =>
    row.id.toLowerCase().includes(needle) ||
    row.jobName.toLowerCase().includes(needle) ||
    (row.lastError?.toLowerCase().includes(needle) ?? false);
}

export async function listJobsPage(soniq: Soniq, query: JobQuery): Promise<Page<Job>> {
  if (query.q && isJobId(query.q) && !query.cursor) {
    const job = await soniq.jobs.get(query.q);
    if (job && matchesFilters(job, query))
      return { items: [job], nextCursor: null, prevCursor: null, scanned: 1, truncated: false };
  }
  return keysetPage<Job>({
    fetch: (from, limit) =>
      soniq.jobs.list({
        ...(query.status ? { status: query.status } : {}),
        ...(query.queue ? { queue: query.queue } : {}),
        ...(query.name ? { jobName: query.name } : {}),
        limit,
        ...(from
          ? { [from.direction === "older" ? "after" : "before"]: { createdAt: from.at, id: from.id } }
          : {}),
      }),
    key: (job) => ({ t: job.createdAt.getTime(), id: job.id }),
    limit: query.limit,
    cursor: query.cursor,
    match: query.q ? textMatcher(query.q) : undefined,
  });
}

export interface JobDetail {
  job: Job;
  explain: Explanation;
}

export async function jobDetail(soniq: Soniq, id: string): Promise<JobDetail> {
  const job = await soniq.jobs.get(id);
  if (!job) throw notFound(`No job with id ${id} (a dead-lettered job is at /api/dead-letters/${id}).`);
  return { job, explain: await soniq.jobs.explain(id) };
}
