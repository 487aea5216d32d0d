/**
 * What the dashboard shows of a row. Every job, dead letter and schedule goes through the app's `redact`
 * (core's `soniq.options.redact`) before it leaves the server, in the API and on the pages alike.
 * List responses carry a row without its args, result or error stack (the redacted last error's first
 * line stays, so a list still says why): a thousand 50 kB jobs are a small answer. The detail routes
 * (`/api/jobs/:id`, `/api/dead-letters/:id`, `/api/schedules/:name`) keep every field, redacted.
 * Webhook endpoints never show a secret nor their header values, nor their URL's query values or token-like
 * path segments; delivery lists carry no payload. What a
 * detail quotes of a job (a schedule's args, explain's evidence, a delivery's payload) reads as the CLI and
 * the MCP server show it: core's `shownSchedule`, `shownExplanation`, `shownDelivery` (`@soniq/core/ops`).
 * A job's durable-step checkpoints read as core's `shownSteps` shows them (values as results, errors as the job's,
 * what it hid of a step's value scrubbed from every error text a detail shows: the steps', the job's, explain's).
 */
import type {
  DeadLetterJob,
  Explanation,
  Job,
  JobStep,
  Schedule,
  WebhookDelivery,
  WebhookEndpoint,
} from "@soniq/core";
import {
  type RedactableRow,
  type Redactor,
  type StepsSource,
  shownExplanation,
  shownRows,
  shownSchedule,
  shownSteps,
  shownUrl,
} from "@soniq/core/ops";

export function firstLine(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return (text.split("\n")[0] ?? "").slice(0, 500);
}

export type JobListRow = Omit<Job, "args" | "result">;
export type DeadLetterListRow = Omit<DeadLetterJob, "args">;

/** A job as a list shows it, from the row `shownRows` made (redacted, its steps' hidden values scrubbed). */
export function jobListRow(shown: Job): JobListRow {
  const { args: _args, result: _result, ...rest } = shown;
  return { ...rest, lastError: firstLine(rest.lastError) };
}

/** A dead letter as a list shows it, from the row `shownRows` made. */
export function deadLetterListRow(shown: DeadLetterJob): DeadLetterListRow {
  const { args: _args, ...rest } = shown;
  return { ...rest, lastError: firstLine(rest.lastError) };
}

/** A schedule in a list: everything but its args. */
export function scheduleListRow<T extends { args?: unknown }>(schedule: T): Omit<T, "args"> {
  const { args: _args, ...rest } = schedule;
  return rest;
}

/**
 * A job with its explain verdict and its steps, as the detail route and page show it (the evidence's last
 * error as the job's; see `shownSteps`).
 */
export function shownDetail<
  D extends { job: Job; explain: Explanation | null; steps?: readonly JobStep[] | null },
>(redact: Redactor, detail: D): D {
  if (!redact.active) return detail;
  const explain = detail.explain && shownExplanation(redact, detail.explain, detail.job);
  if (!detail.steps) return { ...detail, job: redact.row(detail.job), explain };
  const shown = shownSteps(redact, detail.job, detail.steps);
  return {
    ...detail,
    job: shown.row,
    explain: explain && scrubEvidence(explain, shown.scrub),
    steps: shown.steps,
  };
}

/** A dead letter with its steps, as its detail route and page show them. */
export function shownDeadLetter(
  redact: Redactor,
  row: DeadLetterJob,
  steps: readonly JobStep[] | null,
): { deadLetter: DeadLetterJob; steps: JobStep[] | null } {
  if (!redact.active) return { deadLetter: row, steps: steps ? [...steps] : null };
  if (!steps) return { deadLetter: redact.row(row), steps: null };
  const shown = shownSteps(redact, row, steps);
  return { deadLetter: shown.row, steps: shown.steps };
}

function scrubEvidence(explain: Explanation, scrub: (text: string | null) => string | null): Explanation {
  return {
    ...explain,
    reasons: explain.reasons.map((r) =>
      typeof r.evidence.lastError === "string"
        ? { ...r, evidence: { ...r.evidence, lastError: scrub(r.evidence.lastError) } }
        : r,
    ),
  };
}

/** A page of rows (jobs or dead letters) as core's `shownRows` shows them (each last error scrubbed of its steps' hidden values too). */
export async function shownPage<T extends RedactableRow & { id: string }, P extends { items: T[] }>(
  source: StepsSource,
  page: P,
): Promise<P> {
  return { ...page, items: await shownRows(source, page.items) };
}

/** A schedule detail (`{ schedule, upcoming, history }`) with the schedule's args redacted as the job's. */
export function shownScheduleDetail<D extends { schedule: Schedule }>(redact: Redactor, detail: D): D {
  return { ...detail, schedule: shownSchedule(redact, detail.schedule) };
}

/** What the dashboard shows of an endpoint's extra header values (they often carry a token). */
export const HIDDEN_HEADER = "[hidden]";

/**
 * An endpoint with its header values hidden and its URL as core's `shownUrl` shows it (query values and
 * token-like path segments hidden); the secret never leaves core: only `hasSecret`.
 */
export function shownEndpoint(endpoint: WebhookEndpoint): WebhookEndpoint {
  return {
    ...endpoint,
    url: shownUrl(endpoint.url),
    headers: Object.fromEntries(Object.keys(endpoint.headers).map((name) => [name, HIDDEN_HEADER])),
  };
}

export type DeliveryListRow = Omit<WebhookDelivery, "payload" | "responseBody">;

/** A delivery in a list: no payload nor response body, the last error's first line. */
export function deliveryListRow(delivery: WebhookDelivery): DeliveryListRow {
  const { payload: _payload, responseBody: _body, ...rest } = delivery;
  return { ...rest, lastError: firstLine(rest.lastError) };
}
