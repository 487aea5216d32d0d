/**
 * Query-string and body validation. Every malformed input is a 400 (`bad_request`) and an id that
 * cannot name anything is a 404, so no bad input reaches core as a 5xx.
 */

import { JOB_STATUSES, type JobStatus } from "@soniq/core";
import { JOB_NAME_PATTERN } from "@soniq/core/ops";
import { badRequest, notFound } from "./errors.js";

export const MAX_LIMIT = 1000;
const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export function parseLimit(raw: string | undefined, fallback = 50): number {
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    throw badRequest(`limit must be a whole number from 1 to ${MAX_LIMIT} (got "${raw.slice(0, 40)}")`);
  }
  return Math.min(Number(raw), MAX_LIMIT);
}

export function parseId(raw: string | undefined, what = "job"): string {
  if (raw === undefined || !ID_PATTERN.test(raw)) throw notFound(`No ${what} with this id.`);
  return raw;
}

export function parseStatuses(raw: string | undefined): JobStatus[] | undefined {
  if (raw === undefined || raw === "") return undefined;
  const parts = raw.split(",").map((s) => s.trim());
  for (const part of parts) {
    if (part === "dead_letter") {
      throw badRequest("dead_letter is not a job status: dead letters are listed at /api/dead-letters");
    }
    if (!(JOB_STATUSES as readonly string[]).includes(part)) {
      throw badRequest(
        `status must be one of ${JOB_STATUSES.join(", ")} (comma-separated); got "${part.slice(0, 40)}"`,
      );
    }
  }
  return [...new Set(parts)] as JobStatus[];
}

export function parseJobName(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > 200 || !JOB_NAME_PATTERN.test(raw)) {
    throw badRequest(`name must be a dotted lowercase job name like "emails.send_welcome"`);
  }
  return raw;
}

/** Queue names follow the job-name pattern in core. */
export function parseQueue(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > 255 || !JOB_NAME_PATTERN.test(raw)) {
    throw badRequest(`queue must be a dotted lowercase queue name like "emails"`);
  }
  return raw;
}

export function parseText(raw: string | undefined, field: string, max = 200): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > max || CONTROL.test(raw)) {
    throw badRequest(`${field} must be at most ${max} printable characters`);
  }
  return raw;
}

const DURATION = /^(\d{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function parseDurationMs(raw: string): number | null {
  const m = DURATION.exec(raw);
  if (!m?.[1] || !m[2]) return null;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** An ISO timestamp, epoch milliseconds, or a duration back from now ("1h", "14d"). */
export function parseInstant(raw: string | undefined, field: string, now = Date.now()): Date | undefined {
  if (raw === undefined || raw === "") return undefined;
  const ago = parseDurationMs(raw);
  let date: Date;
  if (ago !== null) date = new Date(now - ago);
  else if (/^\d{1,15}$/.test(raw)) date = new Date(Number(raw));
  else if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw)) date = new Date(raw);
  else date = new Date(Number.NaN);
  if (Number.isNaN(date.getTime()) || date.getTime() < 0 || date.getFullYear() > 9999) {
    throw badRequest(`${field} must be an ISO date, epoch milliseconds or a duration like 1h or 14d`);
  }
  return date;
}
