/**
 * The app's `redact` (`soniq.options.redact`) applied to what a surface shows beyond plain rows (a job or dead
 * letter goes through `redact.row`): a schedule's args, explain's evidence, which quotes the job's last error,
 * and what a webhook delivery's payload quotes of a job. The CLI, the dashboard and the MCP server show these
 * the same way.
 */
import { isSoniqError, SoniqError } from "../common/errors.js";
import type { DeadLetterJob, Job, Schedule } from "../common/types.js";
import { formatIssues } from "../jobs/definition.js";
import type { ExplainReason, Explanation } from "../jobs/explain.js";
import { REDACTED, type RedactableRow, type Redactor } from "../observability/redact.js";
import type { WebhookDelivery } from "../webhooks/types.js";

/** A schedule with its args shown as the args of the job it fires. */
export function shownSchedule<T extends Pick<Schedule, "jobName" | "args">>(
  redact: Redactor,
  schedule: T,
): T {
  return { ...schedule, args: redact.value("args", schedule.args, schedule.jobName) };
}

/** A row whose error text evidence may quote: the job or dead letter explained, or one its evidence names. */
export type QuotedRow = RedactableRow & { readonly id: string };

/**
 * An explanation with every last error its evidence quotes redacted against the row it came from: `row`, the
 * job or dead letter explained, or for a held flow step the parent's dead letter its evidence names
 * (`deadLetterId`, found in `quoted`); that row's redacted values are scrubbed from the text too. A group its
 * evidence names (`group_concurrency_full`: in the message and `evidence.group`) shows as `redact.row` shows
 * the row's group. Fails closed: a quoted error or group whose row is not at hand shows "[redacted]". Unchanged
 * without a `redact`.
 */
export function shownExplanation(
  redact: Redactor,
  explanation: Explanation,
  row: RedactableRow | null,
  quoted: readonly QuotedRow[] = [],
): Explanation {
  if (!redact.active) return explanation;
  const shownError = (r: ExplainReason): ExplainReason => {
    const text = r.evidence.lastError;
    if (text === null || text === undefined) return r;
    const from = typeof r.evidence.deadLetterId === "string" ? r.evidence.deadLetterId : null;
    const source = from === null ? row : (quoted.find((q) => q.id === from) ?? null);
    const shown =
      source !== null && typeof text === "string" ? redact.error(text, source.jobName, source) : REDACTED;
    return { ...r, evidence: { ...r.evidence, lastError: shown } };
  };
  let groupShown: boolean | undefined;
  const shownGroup = (r: ExplainReason): ExplainReason => {
    const group = r.evidence.group;
    if (group === null || group === undefined) return r;
    groupShown ??= row !== null && typeof row.group === "string" && redact.row(row).group === row.group;
    if (groupShown && group === row?.group) return r;
    const message = typeof group === "string" && group !== "" ? withoutQuote(r.message, group) : r.message;
    return { ...r, message, evidence: { ...r.evidence, group: REDACTED } };
  };
  return { ...explanation, reasons: explanation.reasons.map((r) => shownGroup(shownError(r))) };
}

/** `text` with `quote` replaced by "[redacted]": its quoted form (`"..."`) where there is one, else every occurrence. */
function withoutQuote(text: string, quote: string): string {
  const quotedForm = `"${quote}"`;
  return text.includes(quotedForm)
    ? text.split(quotedForm).join(`"${REDACTED}"`)
    : text.split(quote).join(REDACTED);
}

/** What `shownExplanationOf` reads: an app's jobs, dead letters and `redact` (a `Soniq` is one). */
export interface ExplainSource {
  readonly jobs: {
    explain(id: string): Promise<Explanation>;
    get(id: string): Promise<Job | null>;
  };
  readonly deadLetters: { get(id: string): Promise<DeadLetterJob | null> };
  readonly options: { readonly redact: Redactor };
}

/**
 * `soniq.jobs.explain(id)` as an operator may see it: its evidence redacted against the rows it quotes (the
 * job or dead letter explained, a held flow step's dead-lettered parents), read only while a `redact` is active.
 */
export async function shownExplanationOf(soniq: ExplainSource, id: string): Promise<Explanation> {
  const explanation = await soniq.jobs.explain(id);
  const redact = soniq.options.redact;
  if (!redact.active) return explanation;
  const row = (await soniq.jobs.get(id)) ?? (await soniq.deadLetters.get(id));
  const named = new Set<string>();
  for (const r of explanation.reasons)
    if (typeof r.evidence.deadLetterId === "string") named.add(r.evidence.deadLetterId);
  const quoted: QuotedRow[] = [];
  for (const deadLetterId of named) {
    const dead = await soniq.deadLetters.get(deadLetterId);
    if (dead !== null) quoted.push(dead);
  }
  return shownExplanation(redact, explanation, row, quoted);
}

/** A path segment that reads as a token: 20+ characters of the kinds tokens are made of (base64url, hex, ...). */
const TOKEN_LIKE = /^[A-Za-z0-9_\-.~%+=]{20,}$/;

/**
 * A webhook endpoint URL as an operator is shown it (endpoint views, the audit log's params): every query value,
 * every path segment that reads as a token (20+ characters of `[A-Za-z0-9_-.~%+=]`), any credentials and the
 * fragment become "[redacted]"; scheme, host, port, the other path segments and the query's keys stay. A URL
 * that does not parse is "[redacted]" whole. The stored URL is unchanged and deliveries go to it.
 */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return REDACTED;
  }
  const credentials = parsed.username !== "" || parsed.password !== "" ? `${REDACTED}@` : "";
  const path = parsed.pathname
    .split("/")
    .map((segment) => (TOKEN_LIKE.test(segment) ? REDACTED : segment))
    .join("/");
  const query =
    parsed.search === ""
      ? ""
      : `?${parsed.search
          .slice(1)
          .split("&")
          .map((part) => {
            const eq = part.indexOf("=");
            if (eq >= 0) return `${part.slice(0, eq)}=${REDACTED}`;
            return TOKEN_LIKE.test(part) ? REDACTED : part;
          })
          .join("&")}`;
  const fragment = parsed.hash === "" ? "" : `#${REDACTED}`;
  return `${parsed.protocol}//${credentials}${parsed.host}${path}${query}${fragment}`;
}

/**
 * A delivery with the job values its payload quotes (`args`, `result`, `error`) shown through `redact`. The
 * payload was redacted by the app that stored it; the reading app's rule applies on top.
 */
export function shownDelivery(redact: Redactor, delivery: WebhookDelivery): WebhookDelivery {
  const data = delivery.payload.data;
  if (!redact.active || typeof data.jobName !== "string") return delivery;
  const shown: Record<string, unknown> = { ...data };
  if ("args" in data) shown.args = redact.value("args", data.args, data.jobName);
  if ("result" in data) shown.result = redact.value("result", data.result, data.jobName);
  if (typeof data.error === "string") shown.error = redact.error(data.error, data.jobName);
  return { ...delivery, payload: { ...delivery.payload, data: shown } };
}

/** A schema issue as an args refusal's `context.issues` holds it (core's `plainIssues`). */
interface PlainIssue {
  readonly message: string;
  readonly path: readonly string[];
}

function plainIssuesOf(value: unknown): PlainIssue[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const ok = value.every(
    (i) =>
      typeof i === "object" &&
      i !== null &&
      typeof (i as PlainIssue).message === "string" &&
      Array.isArray((i as PlainIssue).path) &&
      (i as PlainIssue).path.every((k) => typeof k === "string"),
  );
  return ok ? (value as PlainIssue[]) : null;
}

/**
 * A thrown error as an operator surface (the dashboard's error answers, the MCP server's tool errors) may show
 * it. A validator's messages often quote the value they refused (`email: "ann@example.com" is not allowed`), and
 * an args refusal (`SONIQ_TASK_ARGS_INVALID`, e.g. a replay whose args the job's schema now refuses) carries them
 * in its message and `context.issues`. While a `redact` is active such a refusal is shown with its code, its job
 * name and each issue's path, and "[redacted]" for each validator message: they may quote any value in any
 * words, so none is kept (fail closed). Anything else, and everything without a `redact`, is returned unchanged.
 */
export function shownRefusal(redact: Redactor, err: unknown): unknown {
  if (!redact.active || !isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")) return err;
  const issues = plainIssuesOf(err.context.issues);
  if (issues === null) return err;
  const hidden = issues.map((i) => ({ path: [...i.path], message: REDACTED }));
  const raw = formatIssues(issues);
  const note = " (validator messages are hidden while redact is active)";
  const message = err.message.includes(raw)
    ? err.message.split(raw).join(`${formatIssues(hidden)}${note}`)
    : `Args for "${String(err.context.name)}" fail its schema at ${hidden.map((i) => i.path.join(".") || "(top level)").join(", ")}${note}.`;
  return new SoniqError(err.code, message, { context: { ...err.context, issues: hidden } });
}
