/** Bar charts drawn as inline SVG on the server (no chart library, nothing loaded from elsewhere). */
import type { MetricBucket } from "../data/overview.js";
import { formatCount, formatDate, type Html, html } from "../html.js";

const W = 600;
const H = 120;

export function barChart(
  title: string,
  buckets: readonly MetricBucket[],
  value: (b: MetricBucket) => number,
  tone: "" | "bad" | "warn",
): Html {
  const values = buckets.map(value);
  const max = Math.max(1, ...values);
  const total = values.reduce((a, b) => a + b, 0);
  const width = W / Math.max(1, values.length);
  const bars = values.map((v, i) => {
    const h = Math.round((v / max) * (H - 4));
    if (h === 0) return "";
    return html`<rect class="bar ${tone}" x="${(i * width).toFixed(2)}" y="${H - h}" width="${Math.max(0.5, width - 1).toFixed(2)}" height="${h}"><title>${formatDate(buckets[i]?.at)}: ${formatCount(v)}</title></rect>`;
  });
  const first = buckets[0]?.at;
  const last = buckets[buckets.length - 1]?.at;
  return html`<figure class="panel" data-chart="${title}">
<figcaption><strong>${title}</strong> <span class="muted small">${formatCount(total)} in range · peak ${formatCount(max === 1 && total === 0 ? 0 : max)} per bucket</span></figcaption>
<svg class="chart" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label="${title}: ${formatCount(total)} in range">
<line class="axis" x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}"/>${bars}</svg>
<div class="muted small">${formatDate(first)} → ${formatDate(last)}</div>
</figure>`;
}
