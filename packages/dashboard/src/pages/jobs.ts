/** The jobs list (filters, search, cursor pages) and one job's detail page. */
import { JOB_STATUSES, type Job } from "@soniq/core";
import { progressPercent, shortId } from "@soniq/core/ops";
import type { JobDetail, JobQuery } from "../data/jobs.js";
import { formatArgsVersion, formatDate, formatDuration, type Html, html, prettyJson } from "../html.js";
import type { Page } from "../paging.js";
import { canWrite, type PageFrame, pagerLinks, searchField, statusBadge, writeHint } from "./layout.js";
import { signalForm, stepTimeline } from "./steps.js";

function firstLine(text: string | null): string {
  return text ? (text.split("\n")[0] ?? "").slice(0, 200) : "";
}

export function jobsPage(
  frame: PageFrame,
  params: Record<string, string | undefined>,
  query: JobQuery | null,
  page: Page<Job> | null,
  error: string | null,
): Html {
  const base = frame.base;
  const statusValue = params.status ?? "";
  const form = html`<form class="filters" method="get" action="${base}/jobs" role="search">
<label>Status<select name="status"><option value="">any</option>${JOB_STATUSES.map(
    (s) => html`<option value="${s}"${statusValue === s ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
<label>Queue<input name="queue" value="${params.queue ?? ""}" placeholder="default" size="12"></label>
<label>Job name<input name="name" value="${params.name ?? ""}" placeholder="emails.send_welcome" size="22"></label>
${searchField(frame, params.q, 24)}
<label>Per page<input name="limit" value="${params.limit ?? ""}" placeholder="50" size="4" inputmode="numeric"></label>
<button type="submit">Filter</button> <a href="${base}/jobs">Clear</a></form>`;
  if (error || !page || !query) {
    return html`<h1>Jobs</h1>${form}<div class="banner bad" role="alert">${error ?? "Invalid filter"}</div>`;
  }
  const rows = page.items.map(
    (
      j,
    ) => html`<tr data-job-id="${j.id}"><td><a href="${base}/jobs/${j.id}"><code>${shortId(j.id)}</code></a></td>
<td>${j.jobName}</td><td>${statusBadge(j.status)}</td><td>${j.queue}</td><td class="num">${j.attempts}/${j.maxAttempts}</td>
<td class="small">${formatDate(j.createdAt)}</td><td class="small">${formatDate(j.updatedAt)}</td><td class="err small" title="${firstLine(j.lastError)}">${firstLine(j.lastError)}</td></tr>`,
  );
  return html`<h1>Jobs</h1>${form}
<table data-testid="jobs"><thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Queue</th><th class="num" scope="col">Attempts</th><th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Last error</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8" class="muted">No jobs match.</td></tr>`}</tbody></table>
${pagerLinks(base, "/jobs", params, page)}`;
}

function explainPanel(detail: JobDetail): Html {
  const e = detail.explain;
  return html`<div data-testid="explain"><p><strong>${e.verdict}</strong></p><ul>${e.reasons.map(
    (r) =>
      html`<li><code>${r.code}</code> ${r.message}${r.evidence === undefined ? "" : html`<pre>${prettyJson(r.evidence)}</pre>`}</li>`,
  )}</ul></div>`;
}

/**
 * The handler's last `ctx.progress()` (as redacted): a bar when the value says how far (`progressPercent`),
 * and the value itself. The page's auto-refresh keeps it current while the job runs.
 */
function progressPanel(progress: unknown): Html {
  if (progress === null || progress === undefined) return html`<p class="muted">None reported.</p>`;
  const percent = progressPercent(progress);
  const label = percent === null ? "" : `${Number(percent.toFixed(1))}%`;
  const bar =
    percent === null
      ? ""
      : html`<p><progress data-testid="job-progress-bar" max="100" value="${String(percent)}" aria-label="Job progress">${label}</progress> <span data-testid="job-progress-percent">${label}</span></p>`;
  return html`${bar}<pre data-testid="job-progress">${prettyJson(progress)}</pre>`;
}

/** The trace id, linked through the `traceUrl` option when it gives an http(s) URL. */
export function traceCell(
  traceId: string | null,
  traceUrl: ((traceId: string) => string) | null,
): Html | string {
  if (traceId === null) return "—";
  let href: string | null = null;
  try {
    const url = traceUrl ? new URL(traceUrl(traceId)) : null;
    if (url && (url.protocol === "https:" || url.protocol === "http:")) href = url.href;
  } catch {
    href = null;
  }
  return href === null
    ? html`<code data-testid="job-trace">${traceId}</code>`
    : html`<a data-testid="job-trace" href="${href}" target="_blank" rel="noopener noreferrer"><code>${traceId}</code></a>`;
}

export function jobDetailPage(
  frame: PageFrame,
  detail: JobDetail,
  traceUrl: ((traceId: string) => string) | null = null,
): Html {
  const j = detail.job;
  const cancellable = j.status === "queued" || j.status === "processing";
  const runFor =
    j.status === "done" || j.status === "cancelled" ? j.updatedAt.getTime() - j.createdAt.getTime() : null;
  const cancel =
    cancellable && canWrite(frame)
      ? html`<button type="button" class="danger" data-post="${frame.base}/api/jobs/${j.id}/cancel" data-confirm="Click again to cancel" data-done="Job cancelled.">Cancel job</button>`
      : "";
  return html`<h1>Job <code>${j.id}</code></h1>
<div class="actions">${statusBadge(j.status)} ${cancel}</div>${cancellable ? writeHint(frame) : ""}
<div class="panel"><dl class="kv" data-testid="job-fields">
<dt>Name</dt><dd>${j.jobName}</dd><dt>Queue</dt><dd><a href="${frame.base}/jobs?queue=${encodeURIComponent(j.queue)}">${j.queue}</a></dd>
<dt>Status</dt><dd>${j.status}</dd><dt>Attempts</dt><dd>${j.attempts} of ${j.maxAttempts}</dd><dt>Priority</dt><dd>${j.priority}</dd>
<dt>Args version</dt><dd data-testid="job-args-version">${formatArgsVersion(j.argsVersion)}</dd>
<dt>Created</dt><dd>${formatDate(j.createdAt)}</dd><dt>Scheduled for</dt><dd>${formatDate(j.scheduledAt)}</dd>
<dt>Updated</dt><dd>${formatDate(j.updatedAt)}</dd><dt>Created → finished</dt><dd>${formatDuration(runFor)}</dd>
<dt>Expires</dt><dd>${formatDate(j.expiresAt)}</dd><dt>Worker</dt><dd>${j.workerId ?? "—"}</dd>
<dt>Dedup key</dt><dd>${j.dedupKey ?? "—"}</dd><dt>Producer</dt><dd>${j.producerId ?? "—"}</dd>
<dt>Trace</dt><dd>${traceCell(j.traceId, traceUrl)}</dd></dl></div>
<h2>Progress</h2>${progressPanel(j.progress)}
<section data-testid="steps-section"><h2>Steps</h2>${stepTimeline(detail.steps)}${signalForm(frame, j, detail.steps)}</section>
<h2>Why it is (not) running</h2>${explainPanel(detail)}
<h2>Arguments</h2><pre data-testid="job-args">${prettyJson(j.args)}</pre>
<h2>Result</h2>${j.result === null || j.result === undefined ? html`<p class="muted">None.</p>` : html`<pre data-testid="job-result">${prettyJson(j.result)}</pre>`}
<h2>Last error</h2>${j.lastError ? html`<pre data-testid="job-error">${j.lastError}</pre>` : html`<p class="muted">None.</p>`}`;
}
