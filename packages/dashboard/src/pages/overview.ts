/** The overview: the six stats, throughput/failure/dead-letter charts, queues with lag and pause state. */
import {
  listQueues,
  metricsSeries,
  type QueuesResult,
  RANGES,
  type RangeName,
  type StatKey,
  type StatsSummary,
  statsSummary,
} from "../data/overview.js";
import type { WorkerRow } from "../data/workers.js";
import type { Features } from "../features.js";
import { formatCount, formatDuration, formatEstimate, type Html, html } from "../html.js";
import { barChart } from "./charts.js";
import { notAvailablePanel, statusBadge } from "./layout.js";

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

function cell(q: QueuesResult["queues"][number], key: StatKey): Html | string {
  return q.stats ? countCell(q.stats[key], q.estimated.includes(key)) : "—";
}

export function queueTable(result: QueuesResult, base: string): Html {
  if (result.queues.length === 0) return html`<p class="muted">No queues yet.</p>`;
  return html`<table data-testid="queues"><caption class="muted small">Source: ${result.source}</caption>
<thead><tr><th scope="col">Queue</th><th scope="col">State</th><th class="num" scope="col">Queued</th><th class="num" scope="col">Processing</th><th class="num" scope="col">Done</th><th class="num" scope="col">Dead letters</th><th class="num" scope="col">Lag</th></tr></thead>
<tbody>${result.queues.map(
    (
      q,
    ) => html`<tr data-queue="${q.name}"><td><a href="${base}/jobs?queue=${encodeURIComponent(q.name)}">${q.name}</a></td>
<td>${q.paused === null ? html`<span class="muted">—</span>` : statusBadge(q.paused ? "paused" : "running")}</td>
<td class="num">${cell(q, "queued")}</td><td class="num">${cell(q, "processing")}</td>
<td class="num">${cell(q, "done")}</td><td class="num">${cell(q, "dead_letter")}</td>
<td class="num">${result.controls ? formatDuration(q.lagMs) : "—"}</td></tr>`,
  )}</tbody></table>`;
}

export async function overviewPage(
  soniq: Parameters<typeof listQueues>[0],
  features: Features,
  base: string,
  range: RangeName,
  workers: () => Promise<WorkerRow[]>,
): Promise<Html> {
  const [queues, ws, replication] = await Promise.all([
    listQueues(soniq, features, workers),
    workers().catch(() => null),
    soniq.replication(),
  ]);
  const stats = await statsSummary(soniq, features, queues);
  let charts: Html;
  if (features.metrics) {
    const { spanMs, bucketMs } = RANGES[range];
    const series = await metricsSeries(features, { since: new Date(Date.now() - spanMs), bucketMs });
    charts = html`<div class="charts">${barChart("Throughput (done)", series.buckets, (b) => b.done, "")}${barChart("Failures", series.buckets, (b) => b.failed, "warn")}${barChart("Dead-lettered", series.buckets, (b) => b.deadLettered, "bad")}</div>`;
  } else {
    charts = notAvailablePanel(
      "Throughput charts",
      "They are drawn from per-minute metrics (soniq.metrics), which this core does not expose yet.",
    );
  }
  const ranges = (Object.keys(RANGES) as RangeName[]).map(
    (r) => html`<a href="${base}/?range=${r}"${r === range ? html` aria-current="true"` : ""}>${r}</a> `,
  );
  const live = ws ? ws.filter((w) => w.state === "live").length : null;
  const stale = ws ? ws.filter((w) => w.state === "stale").length : null;
  return html`<h1>Overview</h1>
${replication.readReplica ? html`<p class="small">Read from a replica, ${replication.lagMs === null ? "not replaying (promoted?)" : `${formatDuration(replication.lagMs)} behind the primary`}.</p>` : ""}
${statCards(stats, base)}
<h2>Activity <span class="small">${ranges}</span></h2>
${charts}
<h2>Queues</h2>
${queueTable(queues, base)}
${queues.controls ? "" : html`<p class="muted small">Pause state and lag need queue controls (soniq.queues), not in this Soniq version.</p>`}
<h2>Workers</h2>
<p>${live === null ? "Worker listing is not available in this Soniq version." : html`<a href="${base}/workers">${live} live, ${stale} stale</a>`}</p>`;
}
