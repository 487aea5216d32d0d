/**
 * Jobs as the pages and the API read them: filtered and searched by core (`jobs.list` with `q`: the id, name
 * or last error contains the text; while a `redact` is active, an id or a job name exactly: core's
 * `searchFilter`), paged by cursor; one job with its explain verdict and its durable steps.
 */

import type { Explanation, Job, JobStatus, JobStep, Soniq } from "@soniq/core";
import { searchFilter } from "@soniq/core/ops";
import { notFound } from "../errors.js";
import { type Cursor, keysetPage, type Page } from "../paging.js";
import { readSteps } from "./steps.js";

export interface JobQuery {
  status?: JobStatus[] | undefined;
  queue?: string | undefined;
  name?: string | undefined;
  /** Search (core's `q`): text in the id, name or last error, any case; an id or a job name while redacting. */
  q?: string | undefined;
  limit: number;
  cursor?: Cursor | undefined;
}

export async function listJobsPage(soniq: Soniq, query: JobQuery): Promise<Page<Job>> {
  const filter = searchFilter(
    {
      ...(query.status ? { status: query.status } : {}),
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.name ? { jobName: query.name } : {}),
    },
    query.q,
    soniq.options.redact.active,
  );
  return keysetPage<Job>({
    fetch: (from, limit) =>
      soniq.jobs.list({
        ...filter,
        limit,
        ...(from
          ? { [from.direction === "older" ? "after" : "before"]: { createdAt: from.at, id: from.id } }
          : {}),
      }),
    key: (job) => ({ t: job.createdAt.getTime(), id: job.id }),
    limit: query.limit,
    cursor: query.cursor,
  });
}

export interface JobDetail {
  job: Job;
  explain: Explanation;
  /** Its durable-step checkpoints (`soniq.jobs.steps`), first written first; null when the backend keeps none. */
  steps: JobStep[] | null;
}

export async function jobDetail(soniq: Soniq, id: string): Promise<JobDetail> {
  const job = await soniq.jobs.get(id);
  if (!job) throw notFound(`No job with id ${id} (a dead-lettered job is at /api/dead-letters/${id}).`);
  const [explain, steps] = await Promise.all([soniq.jobs.explain(id), readSteps(soniq, id)]);
  return { job, explain, steps };
}
