/** Workers, queues, schedules and the audit log pages. */
import type { AuditEntry, Schedule, WorkerView } from "@soniq/core";
import { queueLimitsText, shortId, workerCounts } from "@soniq/core/ops";
import type { ScheduleDetail } from "../api/schedules.js";
import type { QueueRow } from "../data/overview.js";
import { formatDate, formatDuration, type Html, html, prettyJson } from "../html.js";
import { canWrite, type PageFrame, statusBadge, writeHint } from "./layout.js";
import { queueTable } from "./overview.js";

export function workersPage(_frame: PageFrame, workers: readonly WorkerView[]): Html {
  const rows = workers.map(
    (
      w,
    ) => html`<tr data-worker-id="${w.id}"><td><code>${shortId(w.id)}</code></td><td>${statusBadge(w.state)}</td>
<td>${w.hostname}</td><td class="num">${w.pid}</td><td>${w.queues.length ? w.queues.join(", ") : html`<span class="muted">all</span>`}</td>
<td class="num">${w.concurrency}</td><td class="small">${formatDate(w.lastHeartbeat)} (${formatDuration(w.heartbeatAgeMs)} ago)</td>
<td class="small">${formatDate(w.startedAt)}</td><td class="small">${w.version ?? "—"}</td></tr>`,
  );
  return html`<h1>Workers</h1>
<p data-testid="worker-counts">${workerCounts(workers)}</p>
<p class="muted small">Live: heard from within the stale threshold. Stale: silent for longer, so a peer recovers its jobs. Stopped: shut down (or declared stale by recovery).</p>
<table data-testid="workers"><thead><tr><th scope="col">Id</th><th scope="col">State</th><th scope="col">Host</th><th class="num" scope="col">PID</th><th scope="col">Queues</th><th class="num" scope="col">Concurrency</th><th scope="col">Last heartbeat</th><th scope="col">Started</th><th scope="col">Version</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="9" class="muted">No workers have registered.</td></tr>`}</tbody></table>`;
}

/** Limits form: an empty field keeps the value, "none" clears the limit (core's configure merges). */
function configureForm(base: string, queue: string): Html {
  return html`<form class="filters" data-configure="${base}/api/queues/${queue}/configure" aria-label="Limits of ${queue}">
<label>Concurrency<input name="concurrency" size="5" placeholder="keep" inputmode="numeric"></label>
<label>Per group<input name="groupConcurrency" size="5" placeholder="keep" inputmode="numeric"></label>
<label>Rate: starts<input name="rateMax" size="5" placeholder="keep" inputmode="numeric"></label>
<label>per ms<input name="ratePerMs" size="7" placeholder="60000" inputmode="numeric"></label>
<button type="submit" class="secondary">Set limits</button></form>`;
}

export function queuesPage(frame: PageFrame, queues: readonly QueueRow[]): Html {
  const base = frame.base;
  const controls = canWrite(frame)
    ? html`<h2>Controls</h2><table><tbody>${queues.map(
        (q) =>
          html`<tr><th scope="row">${q.name}</th><td class="actions">${
            q.paused
              ? html`<button type="button" data-post="${base}/api/queues/${q.name}/resume" data-done="Resumed ${q.name}.">Resume</button>`
              : html`<button type="button" class="danger" data-post="${base}/api/queues/${q.name}/pause" data-done="Paused ${q.name}.">Pause</button>`
          }</td><td class="small">limits: ${queueLimitsText(q)}${configureForm(base, q.name)}</td></tr>`,
      )}</tbody></table>`
    : writeHint(frame);
  return html`<h1>Queues</h1>${queueTable(queues, base)}${controls}`;
}

/** `every` in ms as "every 1h30m", or the cron expression with its timezone. */
export function scheduleWhen(s: Pick<Schedule, "cron" | "every" | "timezone">): string {
  if (s.cron) return `${s.cron} (${s.timezone ?? "UTC"})`;
  if (typeof s.every === "number" && Number.isFinite(s.every) && s.every > 0) {
    let rest = s.every;
    let out = "";
    for (const [unit, ms] of [
      ["d", 86_400_000],
      ["h", 3_600_000],
      ["m", 60_000],
      ["s", 1_000],
    ] as const) {
      if (rest >= ms) {
        out += `${Math.floor(rest / ms)}${unit}`;
        rest %= ms;
      }
    }
    return `every ${out}${rest > 0 ? `${rest}ms` : ""}`;
  }
  return s.every === null || s.every === undefined ? "" : `every ${String(s.every)}`;
}

function catchUpText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "withinMs" in value) {
    return `within ${String((value as { withinMs: unknown }).withinMs)} ms`;
  }
  return value === null || value === undefined ? "" : prettyJson(value);
}

function jobLink(frame: PageFrame, id: string | null | undefined): Html | string {
  return id ? html`<a href="${frame.base}/jobs/${id}"><code>${shortId(id)}</code></a>` : "—";
}

export function schedulesPage(frame: PageFrame, schedules: readonly Schedule[]): Html {
  const rows = schedules.map(
    (
      s,
    ) => html`<tr data-schedule="${s.name}"><td><a href="${frame.base}/schedules/${s.name}">${s.name}</a></td><td>${s.jobName}</td><td><code>${scheduleWhen(s)}</code></td>
<td>${statusBadge(s.paused ? "paused" : "active")}</td><td class="small">${formatDate(s.nextRunAt)}</td><td class="small">${formatDate(s.lastRunAt)}</td><td>${jobLink(frame, s.lastJobId)}</td></tr>`,
  );
  return html`<h1>Schedules</h1><table data-testid="schedules"><thead><tr><th scope="col">Name</th><th scope="col">Job</th><th scope="col">When</th><th scope="col">State</th><th scope="col">Next</th><th scope="col">Last fired</th><th scope="col">Last job</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="7" class="muted">No schedules stored yet (a schedules.declare() declaration is stored when a scheduler starts).</td></tr>`}</tbody></table>`;
}

export function scheduleDetailPage(frame: PageFrame, d: ScheduleDetail): Html {
  const s = d.schedule;
  const base = `${frame.base}/api/schedules/${s.name}`;
  const actions = canWrite(frame)
    ? html`<div class="actions">${s.paused ? html`<button type="button" data-post="${base}/resume" data-done="Resumed.">Resume</button>` : html`<button type="button" class="danger" data-post="${base}/pause" data-done="Paused.">Pause</button>`}
<button type="button" data-post="${base}/trigger" data-redirect="job" data-done="Triggered.">Trigger now</button></div>`
    : writeHint(frame);
  const ticks = d.history.map(
    (t) =>
      html`<tr data-outcome="${t.outcome}"><td class="small">${formatDate(t.tickAt)}</td><td>${t.outcome}</td><td>${jobLink(frame, t.jobId)}</td><td>${t.reason ?? ""}</td><td class="small">${formatDate(t.recordedAt)}</td></tr>`,
  );
  const upcoming = d.upcoming.map((u) => html`<li>${formatDate(u)}</li>`);
  return html`<h1>Schedule ${s.name}</h1>${actions}
<dl class="panel" data-testid="schedule"><dt>Job</dt><dd>${s.jobName}</dd><dt>When</dt><dd><code>${scheduleWhen(s)}</code></dd>
<dt>State</dt><dd>${statusBadge(s.paused ? "paused" : "active")}</dd><dt>Queue</dt><dd>${s.queue ?? html`<span class="muted">the job's</span>`}</dd>
<dt>Priority</dt><dd>${s.priority ?? "—"}</dd><dt>Catch-up</dt><dd>${catchUpText(s.catchUp)}</dd>
<dt>Next run</dt><dd>${formatDate(s.nextRunAt)}</dd><dt>Last run</dt><dd>${formatDate(s.lastRunAt)} ${jobLink(frame, s.lastJobId)}</dd>
<dt>Created</dt><dd>${formatDate(s.createdAt)}</dd></dl>
<h2>Arguments</h2><div class="panel"><pre>${prettyJson(s.args)}</pre></div>
<h2>Next fires</h2><ul data-testid="upcoming">${upcoming.length ? upcoming : html`<li class="muted">None (no future fire time).</li>`}</ul>
<h2>History</h2><table data-testid="ticks"><thead><tr><th scope="col">Tick</th><th scope="col">Outcome</th><th scope="col">Job</th><th scope="col">Reason</th><th scope="col">Recorded</th></tr></thead>
<tbody>${ticks.length ? ticks : html`<tr><td colspan="5" class="muted">No ticks recorded yet.</td></tr>`}</tbody></table>`;
}

export function auditPage(_frame: PageFrame, entries: readonly AuditEntry[]): Html {
  const rows = entries.map(
    (e) =>
      html`<tr data-audit-action="${e.action}"><td class="small">${formatDate(e.at)}</td><td>${e.actor}</td><td><code>${e.action}</code></td><td><code>${e.target ?? ""}</code></td><td>${e.outcome}</td><td><code class="small">${prettyJson(e.params)}</code></td></tr>`,
  );
  return html`<h1>Audit log</h1><table data-testid="audit"><thead><tr><th scope="col">At</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col">Params</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="6" class="muted">No entries.</td></tr>`}</tbody></table>`;
}

export function loginPage(base: string, next: string, error: string | null): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · Soniq</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${base}/assets/app.css"><script src="${base}/assets/app.js"></script></head>
<body><main id="main" class="login" data-refresh="off"><h1>Soniq dashboard</h1>
${error ? html`<div class="banner bad" role="alert">${error}</div>` : ""}
<form method="post" action="${base}/login"><label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<input type="hidden" name="next" value="${next}"><button type="submit">Log in</button></form></main></body></html>`;
}

export function errorPage(base: string, status: number, message: string): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} · Soniq</title>
<link rel="stylesheet" href="${base}/assets/app.css"></head><body><main id="main"><h1>${status}</h1>
<div class="banner bad" role="alert">${message}</div><p><a href="${base}/">Back to the overview</a></p></main></body></html>`;
}
