/**
 * What the dashboard shows of a row. Every job, dead letter and schedule goes through the app's `redact`
 * (core's `soniq.options.redact`) before it leaves the server, in the API and on the pages alike.
 * List responses carry a row without its args, result or error stack (the redacted last error's first
 * line stays, so a list still says why): a thousand 50 kB jobs are a small answer. The detail routes
 * (`/api/jobs/:id`, `/api/dead-letters/:id`, `/api/schedules/:name`) keep every field, redacted.
 * Webhook endpoints never show a secret nor their header values; delivery lists carry no payload.
 */
import type { DeadLetterJob, Explanation, Job, WebhookDelivery, WebhookEndpoint } from "@soniq/core";
import type { RedactableRow, Redactor } from "@soniq/core/ops";

type Explain = Explanation;

export function firstLine(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return (text.split("\n")[0] ?? "").slice(0, 500);
}

export type JobListRow = Omit<Job, "args" | "result">;
export type DeadLetterListRow = Omit<DeadLetterJob, "args">;

export function jobListRow(redact: Redactor, job: Job): JobListRow {
  const { args: _args, result: _result, ...rest } = redact.row(job);
  return { ...rest, lastError: firstLine(rest.lastError) };
}

export function deadLetterListRow(redact: Redactor, row: DeadLetterJob): DeadLetterListRow {
  const { args: _args, ...rest } = redact.row(row);
  return { ...rest, lastError: firstLine(rest.lastError) };
}

/** A schedule in a list: everything but its args. */
export function scheduleListRow<T extends { args?: unknown }>(schedule: T): Omit<T, "args"> {
  const { args: _args, ...rest } = schedule;
  return rest;
}

/** A schedule's detail: its args redacted as the args of the job it fires. */
export function shownSchedule<T>(redact: Redactor, schedule: T): T {
  if (typeof schedule !== "object" || schedule === null || !Object.hasOwn(schedule, "args")) return schedule;
  const s = schedule as T & { jobName?: unknown; args?: unknown };
  const jobName = typeof s.jobName === "string" ? s.jobName : "";
  return { ...s, args: redact.value("args", s.args, jobName) };
}

/** Explain's evidence quotes the job's last error: redacted like the job's own. */
export function shownExplain(
  redact: Redactor,
  explain: Explain | null,
  row: { jobName: string; args?: unknown; result?: unknown },
): Explain | null {
  if (explain === null || !redact.active) return explain;
  return {
    ...explain,
    reasons: explain.reasons.map((r) => {
      const evidence = r.evidence as Record<string, unknown> | null | undefined;
      if (typeof evidence !== "object" || evidence === null || typeof evidence.lastError !== "string")
        return r;
      return {
        ...r,
        evidence: { ...evidence, lastError: redact.error(evidence.lastError, row.jobName, row) },
      };
    }),
  };
}

/** A job with its explain verdict, as the detail route and page show it. */
export function shownDetail<D extends { job: Job; explain: Explain | null }>(redact: Redactor, detail: D): D {
  return {
    ...detail,
    job: redact.row(detail.job),
    explain: shownExplain(redact, detail.explain, detail.job),
  };
}

/** A page of rows (jobs or dead letters), each redacted. */
export function shownPage<T extends RedactableRow, P extends { items: T[] }>(redact: Redactor, page: P): P {
  return { ...page, items: page.items.map((row) => redact.row(row)) };
}

/** A schedule detail (`{ schedule, upcoming, history }`) with the schedule's args redacted. */
export function shownScheduleDetail<D extends { schedule: unknown }>(redact: Redactor, detail: D): D {
  return { ...detail, schedule: shownSchedule(redact, detail.schedule) };
}

/** What the dashboard shows of an endpoint's extra header values (they often carry a token). */
export const HIDDEN_HEADER = "[hidden]";

/** An endpoint with its header values hidden (the secret never leaves core: only `hasSecret`). */
export function shownEndpoint(endpoint: WebhookEndpoint): WebhookEndpoint {
  return {
    ...endpoint,
    headers: Object.fromEntries(Object.keys(endpoint.headers).map((name) => [name, HIDDEN_HEADER])),
  };
}

export type DeliveryListRow = Omit<WebhookDelivery, "payload" | "responseBody">;

/** A delivery in a list: no payload nor response body, the last error's first line. */
export function deliveryListRow(delivery: WebhookDelivery): DeliveryListRow {
  const { payload: _payload, responseBody: _body, ...rest } = delivery;
  return { ...rest, lastError: firstLine(rest.lastError) };
}

/**
 * A delivery's detail. Its payload was redacted when it was written; the job values it quotes (args,
 * result, error) go through this app's `redact` again, so what the dashboard shows follows its own rule.
 */
export function shownDelivery(redact: Redactor, delivery: WebhookDelivery): WebhookDelivery {
  const data = delivery.payload.data;
  if (!redact.active || typeof data.jobName !== "string") return delivery;
  const jobName = data.jobName;
  const shown: Record<string, unknown> = { ...data };
  if ("args" in data) shown.args = redact.value("args", data.args, jobName);
  if ("result" in data) shown.result = redact.value("result", data.result, jobName);
  if (typeof data.error === "string") shown.error = redact.error(data.error, jobName);
  return { ...delivery, payload: { ...delivery.payload, data: shown } };
}
