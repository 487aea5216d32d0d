/** Tables for people: one function per kind of row, shared by `status` and the list commands. */
import type { AuditEntry, DeadLetterJob, Job, QueueInfo, Schedule, WorkerView } from "@soniq/core";
import { progressPercent, queueLimitsText, queueStateWord } from "@soniq/core/ops";
import { duration, firstLine, interval, type Printer, shortId } from "./output.js";

export function jobsTable(p: Printer, jobs: Job[]): void {
  if (jobs.length === 0) {
    p.line("no jobs match.");
    return;
  }
  p.table(
    ["ID", "NAME", "STATUS", "QUEUE", "ATTEMPTS", "SCHEDULED", "CREATED", "LAST ERROR"],
    jobs.map((j) => [
      j.id,
      j.jobName,
      p.status(j.status),
      j.queue,
      `${j.attempts}/${j.maxAttempts}`,
      p.ago(j.scheduledAt),
      p.ago(j.createdAt),
      firstLine(j.lastError, 50),
    ]),
  );
}

export function deadLettersTable(p: Printer, rows: DeadLetterJob[]): void {
  if (rows.length === 0) {
    p.line("no dead letters match.");
    return;
  }
  p.table(
    ["ID", "NAME", "QUEUE", "REASON", "ATTEMPTS", "REPLAYS", "MOVED", "LAST ERROR"],
    rows.map((d) => [
      d.id,
      d.jobName,
      d.queue,
      p.paint("red", d.deadLetterReason),
      `${d.attempts}/${d.maxAttempts}`,
      String(d.resurrectionCount),
      p.ago(d.movedToDeadLetterAt),
      firstLine(d.lastError, 50),
    ]),
  );
}

export function workersTable(p: Printer, workers: WorkerView[]): void {
  if (workers.length === 0) {
    p.line("no workers registered.");
    return;
  }
  p.table(
    ["ID", "STATE", "HOST", "PID", "QUEUES", "CONCURRENCY", "HEARTBEAT", "STARTED"],
    workers.map((w) => [
      shortId(w.id),
      p.status(w.state),
      w.hostname,
      String(w.pid),
      w.queues.length === 0 ? "*" : w.queues.join(","),
      String(w.concurrency),
      p.ago(w.lastHeartbeat),
      p.ago(w.startedAt),
    ]),
  );
}

export function queuesTable(p: Printer, queues: QueueInfo[]): void {
  if (queues.length === 0) {
    p.line("no queues yet.");
    return;
  }
  p.table(
    ["QUEUE", "STATE", "QUEUED", "PROCESSING", "DONE", "DEAD", "CANCELLED", "LAG", "LIMITS"],
    queues.map((q) => [
      q.name,
      p.status(queueStateWord(q.paused)),
      String(q.stats.queued),
      String(q.stats.processing),
      String(q.stats.done),
      String(q.stats.dead_letter),
      String(q.stats.cancelled),
      q.lagMs === null ? "-" : duration(q.lagMs),
      queueLimitsText(q),
    ]),
  );
}

/** `every 30s`, or the cron expression with its timezone when it is not UTC. */
export function when(s: Pick<Schedule, "cron" | "every" | "timezone">): string {
  if (s.cron !== null) return s.timezone && s.timezone !== "UTC" ? `${s.cron} (${s.timezone})` : s.cron;
  return s.every === null ? "-" : `every ${interval(s.every)}`;
}

export function schedulesTable(p: Printer, schedules: Schedule[]): void {
  if (schedules.length === 0) {
    p.line("no schedules.");
    return;
  }
  p.table(
    ["NAME", "JOB", "WHEN", "STATE", "NEXT", "LAST", "LAST JOB"],
    schedules.map((s) => [
      s.name,
      s.jobName,
      when(s),
      p.status(s.paused ? "paused" : "active"),
      p.ago(s.nextRunAt),
      p.ago(s.lastRunAt),
      shortId(s.lastJobId),
    ]),
  );
}

export function auditTable(p: Printer, rows: AuditEntry[]): void {
  if (rows.length === 0) {
    p.line("no audit entries.");
    return;
  }
  p.table(
    ["AT", "ACTOR", "ACTION", "TARGET", "OUTCOME"],
    rows.map((a) => [p.ago(a.at), a.actor, a.action, a.target ?? "-", a.outcome]),
  );
}

/** `key  value` lines for one record (show commands). */
export function record(p: Printer, fields: [string, string][]): void {
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [key, value] of fields) p.line(`${p.paint("dim", key.padEnd(width))}  ${value}`);
}

export const stamp = (p: Printer, date: Date | null | undefined): string =>
  date ? `${date.toISOString()} (${p.ago(date)})` : "-";

/** A row's `argsVersion` for `show` commands: the number, or "unversioned" (taken as current). */
export const argsVersionText = (version: number | null): string =>
  version === null ? "unversioned" : String(version);

/**
 * A job's progress for `jobs show`: "-" when it never reported; a 20-cell bar and the percentage when the
 * value says how far (`progressPercent`), followed by the value as JSON unless it is a bare number.
 */
export function progressText(progress: unknown): string {
  if (progress === null || progress === undefined) return "-";
  const percent = progressPercent(progress);
  const json = JSON.stringify(progress);
  if (percent === null) return json;
  const filled = Math.round(percent / 5);
  const bar = `[${"#".repeat(filled)}${".".repeat(20 - filled)}] ${Number(percent.toFixed(1))}%`;
  return typeof progress === "number" ? bar : `${bar}  ${json}`;
}
