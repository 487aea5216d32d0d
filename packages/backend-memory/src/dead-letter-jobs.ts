/** Reading and purging the dead-letter table. */
import type { DeadLetterFilter, DeadLetterJob } from "@soniq/core";
import { optionalTime } from "./errors.js";
import { newestFirst, pageOf } from "./page.js";
import { type DeadLetterRecord, toDeadLetterJob } from "./rows.js";
import type { MemoryStore } from "./store.js";

export function getDeadLetterJob(store: MemoryStore, id: string): DeadLetterJob | null {
  const row = store.deadLetters.get(id);
  return row === undefined ? null : toDeadLetterJob(row);
}

export function listDeadLetterJobs(store: MemoryStore, filter: DeadLetterFilter = {}): DeadLetterJob[] {
  const page = pageOf(filter);
  const since = optionalTime(filter.since, "since");
  const until = optionalTime(filter.until, "until");
  const rows: DeadLetterRecord[] = [];
  for (const row of store.deadLetters.values()) {
    if (filter.jobName !== undefined && row.jobName !== filter.jobName) continue;
    if (filter.queue !== undefined && row.queue !== filter.queue) continue;
    if (filter.reason !== undefined && row.deadLetterReason !== filter.reason) continue;
    if (since !== null && row.movedToDeadLetterAt < since) continue;
    if (until !== null && row.movedToDeadLetterAt >= until) continue;
    rows.push(row);
  }
  return newestFirst(rows, (row) => row.movedToDeadLetterAt, page).map(toDeadLetterJob);
}

export function purgeDeadLetterJob(store: MemoryStore, id: string): boolean {
  const row = store.deadLetters.get(id);
  if (row === undefined) return false;
  store.removeDeadLetter(row);
  return true;
}
