/** The overview: the six stats, throughput/failure/dead-letter charts, queues with lag, pause state and limits. */
import { queueLimitsText, queueStateWord, workerCounts } from "@soniq/core/ops";
import {
  listQueues,
  metricsSeries,
  type QueueRow,
  RANGES,
  type RangeName,
  type StatKey,
  type StatsSummary,
  statsSummary,
} from "../data/overview.js";
import { listWorkers } from "../data/workers.js";
import { formatCount, formatDuration, formatEstimate, type Html, html } from "../html.js";
import type { ResolvedDashboardOptions } from "../options.js";
import { barChart } from "./charts.js";
import { statusBadge } from "./layout.js";

const STAT_KEYS = ["total", "queued", "processing", "done", "dead_letter", "cancelled"] as const;

const ESTIMATE_NOTE =
  "An estimate from the database's statistics: counts above 10,000 done, cancelled or dead-lettered jobs in a queue are not read row by row.";

/** A count, or "about …" (with the reason on hover) when it is an estimate. */
export function countCell(n: number, estimated: boolean): Html {
  return estimated
    ? html`<span class="estimate" title="${ESTIMATE_NOTE}" data-estimated="true">${formatEstimate(n)}</span>`
    : html`${formatCount(n)}`;
}

export function statCards({ stats, estimated }: StatsSummary, base: string): Html {
  const href: Record<string, string> = {
    queued: "/jobs?status=queued",
    processing: "/jobs?status=processing",
    done: "/jobs?status=done",
    cancelled: "/jobs?status=cancelled",
    dead_letter: "/dead-letters",
    total: "/jobs",
  };
  return html`<div class="cards" data-testid="stats">${STAT_KEYS.map(
    (k) =>
      html`<a class="card" href="${base}${href[k]}" data-stat="${k}"><div class="label">${k.replace("_", " ")}</div><div class="value">${countCell(stats[k], estimated.includes(k))}</div></a>`,
  )}</div>${estimated.length > 0 ? html`<p class="muted small" data-testid="estimate-note">“about” marks an estimate: ${ESTIMATE_NOTE} Queued and processing are always exact.</p>` : ""}`;
}

function cell(q: QueueRow, key: StatKey): Html {
  return countCell(q.stats[key], q.estimated.includes(key));
}

export function queueTable(queues: readonly QueueRow[], base: string): Html {
  if (queues.length === 0) return html`<p class="muted">No queues yet.</p>`;
  return html`<table data-testid="queues">
<thead><tr><th scope="col">Queue</th><th scope="col">State</th><th class="num" scope="col">Queued</th><th class="num" scope="col">Processing</th><th class="num" scope="col">Done</th><th class="num" scope="col">Dead letters</th><th class="num" scope="col">Lag</th><th scope="col">Limits</th></tr></thead>
<tbody>${queues.map(
    (
      q,
    ) => html`<tr data-queue="${q.name}"><td><a href="${base}/jobs?queue=${encodeURIComponent(q.name)}">${q.name}</a></td>
<td>${statusBadge(queueStateWord(q.paused))}</td>
<td class="num">${cell(q, "queued")}</td><td class="num">${cell(q, "processing")}</td>
<td class="num">${cell(q, "done")}</td><td class="num">${cell(q, "dead_letter")}</td>
<td class="num">${formatDuration(q.lagMs)}</td>
<td class="small">${queueLimitsText(q)}</td></tr>`,
  )}</tbody></table>`;
}

export async function overviewPage(options: ResolvedDashboardOptions, range: RangeName): Promise<Html> {
  const { soniq, basePath: base } = options;
  const { spanMs, bucketMs } = RANGES[range];
  const [queues, workers, series, replication] = await Promise.all([
    listQueues(soniq),
    listWorkers(options),
    metricsSeries(soniq, { since: new Date(Date.now() - spanMs), bucketMs }),
    soniq.replication.status(),
  ]);
  const stats = await statsSummary(soniq, queues);
  const ranges = (Object.keys(RANGES) as RangeName[]).map(
    (r) => html`<a href="${base}/?range=${r}"${r === range ? html` aria-current="true"` : ""}>${r}</a> `,
  );
  return html`<h1>Overview</h1>
${replication.readReplica ? html`<p class="small">Read from a replica, ${replication.lagMs === null ? "not replaying (promoted?)" : `${formatDuration(replication.lagMs)} behind the primary`}.</p>` : ""}
${statCards(stats, base)}
<h2>Activity <span class="small">${ranges}</span></h2>
<div class="charts">${barChart("Throughput (done)", series.buckets, (b) => b.done, "")}${barChart("Failures", series.buckets, (b) => b.failed, "warn")}${barChart("Dead-lettered", series.buckets, (b) => b.deadLettered, "bad")}</div>
<h2>Queues</h2>
${queueTable(queues, base)}
<h2>Workers</h2>
<p data-testid="worker-counts"><a href="${base}/workers">${workerCounts(workers)}</a></p>`;
}
