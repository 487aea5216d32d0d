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
 * A job's durable-step checkpoints show their values as `redact` shows a result (field "result") and their
 * errors as it shows the job's last error; what it hid of a step's value is scrubbed from every error text a
 * detail shows (the steps', the job's, explain's), as core scrubs what it hid of args and results.
 */
import {
  type DeadLetterJob,
  type Explanation,
  type Job,
  type JobStep,
  REDACTED,
  type Schedule,
  type WebhookDelivery,
  type WebhookEndpoint,
} from "@soniq/core";
import {
  type RedactableRow,
  type Redactor,
  shownExplanation,
  shownSchedule,
  shownUrl,
} from "@soniq/core/ops";

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

/**
 * A job with its explain verdict and its steps, as the detail route and page show it (the evidence's last
 * error as the job's; see `shownSteps`).
 */
export function shownDetail<
  D extends { job: Job; explain: Explanation | null; steps?: readonly JobStep[] | null },
>(redact: Redactor, detail: D): D {
  if (!redact.active) return detail;
  const steps = detail.steps ? shownSteps(redact, detail.steps, detail.job) : null;
  const job = redact.row(detail.job);
  const explain = detail.explain && shownExplanation(redact, detail.explain, detail.job);
  return {
    ...detail,
    job: steps ? { ...job, lastError: scrub(job.lastError, steps.hidden) } : job,
    explain: explain && steps ? scrubEvidence(explain, steps.hidden) : explain,
    ...(detail.steps === undefined ? {} : { steps: steps ? steps.steps : null }),
  };
}

/** A dead letter with its steps, as its detail route and page show them. */
export function shownDeadLetter(
  redact: Redactor,
  row: DeadLetterJob,
  steps: readonly JobStep[] | null,
): { deadLetter: DeadLetterJob; steps: JobStep[] | null } {
  if (!redact.active) return { deadLetter: row, steps: steps ? [...steps] : null };
  const shown = steps ? shownSteps(redact, steps, row) : null;
  const deadLetter = redact.row(row);
  return {
    deadLetter: shown ? { ...deadLetter, lastError: scrub(deadLetter.lastError, shown.hidden) } : deadLetter,
    steps: shown ? shown.steps : null,
  };
}

/** Strings (and long numbers) shorter than this are never scrubbed from a text: core's rule for its own. */
const MIN_SECRET_LENGTH = 4;
const MAX_DEPTH = 64;

function collect(value: unknown, into: Set<string>, depth = 0): void {
  if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    if (text.length >= MIN_SECRET_LENGTH) into.add(text);
  } else if (typeof value === "object" && value !== null && depth < MAX_DEPTH) {
    for (const v of Object.values(value)) collect(v, into, depth + 1);
  }
}

/** `text` with each of `secrets` in it replaced by "[redacted]", the longest first. */
function scrub(text: string | null, secrets: ReadonlySet<string>): string | null {
  if (text === null || secrets.size === 0) return text;
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length))
    out = out.split(secret).join(REDACTED);
  return out;
}

function scrubEvidence(explain: Explanation, secrets: ReadonlySet<string>): Explanation {
  if (secrets.size === 0) return explain;
  return {
    ...explain,
    reasons: explain.reasons.map((r) =>
      typeof r.evidence.lastError === "string"
        ? { ...r, evidence: { ...r.evidence, lastError: scrub(r.evidence.lastError, secrets) } }
        : r,
    ),
  };
}

/**
 * A job's (or dead letter's) checkpoints as a viewer may see them: each value (a step's result, a signal's
 * payload) through `redact` as a result of the job (field "result"); each error through `redact` as the last
 * error of `row` (the raw job or dead letter: what it hides of the args is scrubbed), then with what `redact`
 * hid of any step's value scrubbed too (`hidden`: those strings, to scrub from the other texts the detail shows).
 */
export function shownSteps(
  redact: Redactor,
  steps: readonly JobStep[],
  row: RedactableRow,
): { steps: JobStep[]; hidden: Set<string> } {
  if (!redact.active) return { steps: [...steps], hidden: new Set() };
  const raw = new Set<string>();
  const kept = new Set<string>();
  const values = steps.map((step) => {
    if (step.value === null || step.value === undefined) return step.value;
    const shown = redact.value("result", step.value, row.jobName);
    collect(step.value, raw);
    collect(shown, kept);
    return shown;
  });
  const hidden = new Set([...raw].filter((text) => !kept.has(text) && text !== REDACTED));
  return {
    steps: steps.map((step, i) => ({
      ...step,
      value: values[i],
      error: scrub(redact.error(step.error, row.jobName, row), hidden),
    })),
    hidden,
  };
}

/** A page of rows (jobs or dead letters), each redacted. */
export function shownPage<T extends RedactableRow, P extends { items: T[] }>(redact: Redactor, page: P): P {
  return { ...page, items: page.items.map((row) => redact.row(row)) };
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
