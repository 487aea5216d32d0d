/**
 * What list responses carry: a row without its args, result or error stack (the last error's first line
 * stays, so a list still says why). A thousand 50 kB jobs are a small answer; the detail routes
 * (`/api/jobs/:id`, `/api/dead-letters/:id`, `/api/schedules/:name`) keep every field.
 */
import type { DeadLetterJob, Job } from "@soniq/core";

export function firstLine(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return (text.split("\n")[0] ?? "").slice(0, 500);
}

export type JobListRow = Omit<Job, "args" | "result">;
export type DeadLetterListRow = Omit<DeadLetterJob, "args">;

export function jobListRow(job: Job): JobListRow {
  const { args: _args, result: _result, ...rest } = job;
  return { ...rest, lastError: firstLine(job.lastError) };
}

export function deadLetterListRow(row: DeadLetterJob): DeadLetterListRow {
  const { args: _args, ...rest } = row;
  return { ...rest, lastError: firstLine(row.lastError) };
}

/** A schedule in a list: everything but its args. */
export function scheduleListRow<T extends { args?: unknown }>(schedule: T): Omit<T, "args"> {
  const { args: _args, ...rest } = schedule;
  return rest;
}
