/**
 * Dead letters: filters, selection (page or all matching), bulk replay/purge, and one row's detail with its
 * steps and the replay's step options.
 */
import { DEAD_LETTER_REASONS, type DeadLetterJob, type JobStep } from "@soniq/core";
import { shortId } from "@soniq/core/ops";
import { formatArgsVersion, formatDate, type Html, html, prettyJson } from "../html.js";
import type { Page } from "../paging.js";
import { canWrite, type PageFrame, pagerLinks, searchField, writeHint } from "./layout.js";
import { replayForm, stepTimeline } from "./steps.js";

function firstLine(text: string | null): string {
  return text ? (text.split("\n")[0] ?? "").slice(0, 200) : "";
}

function filterForm(frame: PageFrame, p: Record<string, string | undefined>): Html {
  const base = frame.base;
  return html`<form class="filters" method="get" action="${base}/dead-letters" role="search">
<label>Queue<input name="queue" value="${p.queue ?? ""}" size="12"></label>
<label>Job name<input name="name" value="${p.name ?? ""}" size="22"></label>
<label>Reason<select name="reason"><option value="">any</option>${DEAD_LETTER_REASONS.map(
    (r) => html`<option value="${r}"${p.reason === r ? html` selected` : ""}>${r}</option>`,
  )}</select></label>
<label>Since<input name="since" value="${p.since ?? ""}" placeholder="24h or 2026-12-01" size="14"></label>
<label>Until<input name="until" value="${p.until ?? ""}" size="14"></label>
${searchField(frame, p.q, 20)}
<label>Per page<input name="limit" value="${p.limit ?? ""}" placeholder="50" size="4" inputmode="numeric"></label>
<button type="submit">Filter</button> <a href="${base}/dead-letters">Clear</a></form>`;
}

export function deadLettersPage(
  frame: PageFrame,
  p: Record<string, string | undefined>,
  page: Page<DeadLetterJob> | null,
  error: string | null,
): Html {
  const base = frame.base;
  if (error || !page) {
    return html`<h1>Dead letters</h1>${filterForm(frame, p)}<div class="banner bad" role="alert">${error}</div>`;
  }
  const filter: Record<string, string> = {};
  for (const k of ["queue", "name", "reason", "since", "until", "q"]) if (p[k]) filter[k] = p[k] as string;
  const write = canWrite(frame);
  const rows = page.items.map(
    (
      d,
    ) => html`<tr data-dead-letter-id="${d.id}">${write ? html`<td><input type="checkbox" data-select name="id" value="${d.id}" aria-label="Select ${d.id}"></td>` : ""}
<td><a href="${base}/dead-letters/${d.id}"><code>${shortId(d.id)}</code></a></td><td>${d.jobName}</td><td>${d.queue}</td>
<td>${d.deadLetterReason}</td><td class="num">${d.attempts}/${d.maxAttempts}</td><td class="num">${d.resurrectionCount}</td>
<td class="small">${formatDate(d.movedToDeadLetterAt)}</td><td class="err small" title="${firstLine(d.lastError)}">${firstLine(d.lastError)}</td></tr>`,
  );
  const bulk = write
    ? html`<div class="actions"><label><input type="checkbox" id="select-all-matching"> Select all matching the filter (every page)</label>
<button type="button" data-bulk="replay">Replay selected…</button><button type="button" class="danger" data-bulk="purge">Purge selected…</button></div>`
    : writeHint(frame);
  return html`<h1>Dead letters</h1>${filterForm(frame, p)}
<form id="dl-bulk" data-filter="${JSON.stringify(filter)}">${bulk}
<table data-testid="dead-letters"><thead><tr>${write ? html`<th scope="col"><input type="checkbox" id="select-page" aria-label="Select this page"></th>` : ""}<th scope="col">Id</th><th scope="col">Name</th><th scope="col">Queue</th><th scope="col">Reason</th><th class="num" scope="col">Attempts</th><th class="num" scope="col">Replays</th><th scope="col">Moved</th><th scope="col">Last error</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="9" class="muted">No dead letters match.</td></tr>`}</tbody></table></form>
${pagerLinks(base, "/dead-letters", { ...filter, limit: p.limit }, page)}`;
}

export function deadLetterDetailPage(
  frame: PageFrame,
  d: DeadLetterJob,
  steps: JobStep[] | null = null,
): Html {
  const base = frame.base;
  const actions = canWrite(frame)
    ? html`<div class="actions">${replayForm(frame, d.id, steps)}
<button type="button" class="danger" data-post="${base}/api/dead-letters/${d.id}/purge" data-confirm="Click again to purge" data-redirect="${base}/dead-letters" data-done="Purged.">Purge</button></div>`
    : writeHint(frame);
  return html`<h1>Dead letter <code>${d.id}</code></h1>${actions}
<div class="panel"><dl class="kv" data-testid="dead-letter-fields">
<dt>Name</dt><dd>${d.jobName}</dd><dt>Queue</dt><dd>${d.queue}</dd><dt>Reason</dt><dd>${d.deadLetterReason}</dd>
<dt>Attempts</dt><dd>${d.attempts} of ${d.maxAttempts}</dd><dt>Priority</dt><dd>${d.priority}</dd>
<dt>Args version</dt><dd data-testid="dead-letter-args-version">${formatArgsVersion(d.argsVersion)}</dd>
<dt>Replayed</dt><dd>${d.resurrectionCount} time(s)${d.lastResurrectionAt ? `, last ${formatDate(d.lastResurrectionAt)}` : ""}</dd>
<dt>Created</dt><dd>${formatDate(d.originalCreatedAt)}</dd><dt>Moved to dead letters</dt><dd>${formatDate(d.movedToDeadLetterAt)}</dd></dl></div>
<section data-testid="steps-section"><h2>Steps</h2>${stepTimeline(steps)}</section>
<h2>Arguments</h2><pre>${prettyJson(d.args)}</pre>
<h2>Tags</h2>${d.tags ? html`<pre>${prettyJson(d.tags)}</pre>` : html`<p class="muted">None.</p>`}
<h2>Last error</h2>${d.lastError ? html`<pre data-testid="dead-letter-error">${d.lastError}</pre>` : html`<p class="muted">None.</p>`}`;
}
