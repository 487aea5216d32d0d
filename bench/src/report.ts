/** Turns samples into medians, one markdown table, the ratios, and the JSON document. */
import { cpus, totalmem } from "node:os";
import type { Sample } from "./plan.js";
import type { SystemAdapter } from "./systems/types.js";

interface Column {
  title: string;
  metric: string;
  /** Throughputs are better higher, latencies lower. */
  better: "higher" | "lower";
}

const COLUMNS: readonly Column[] = [
  { title: "W1 drain c10 (jobs/s)", metric: "drain_c10", better: "higher" },
  { title: "W1 drain c50 (jobs/s)", metric: "drain_c50", better: "higher" },
  { title: "W2 single (jobs/s)", metric: "single_enqueue", better: "higher" },
  { title: "W2 bulk (jobs/s)", metric: "bulk_enqueue", better: "higher" },
  { title: "W3 p50 (ms)", metric: "latency_p50", better: "lower" },
  { title: "W3 p95 (ms)", metric: "latency_p95", better: "lower" },
  { title: "W3 p99 (ms)", metric: "latency_p99", better: "lower" },
  { title: "W3 max (ms)", metric: "latency_max", better: "lower" },
  { title: "W4 fail (jobs/s)", metric: "fail", better: "higher" },
];

/** Which workload produces each metric (to know when a cell's workload had an invalid run). */
const PRODUCED_BY: Record<string, readonly string[]> = {
  drain_c10: ["w1-c10"],
  drain_c50: ["w1-c50"],
  single_enqueue: ["w2-single"],
  bulk_enqueue: ["w1-c10", "w1-c50"],
  latency_p50: ["w3"],
  latency_p95: ["w3"],
  latency_p99: ["w3"],
  latency_max: ["w3"],
  fail: ["w4"],
};

export const RATIO_PEERS = ["graphile-fast", "pg-boss", "limit"] as const;

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export type Summary = Record<string, Record<string, number | null>>;

export function summarise(samples: readonly Sample[]): Summary {
  const summary: Summary = {};
  for (const s of samples) {
    summary[s.system] ??= {};
  }
  for (const system of Object.keys(summary)) {
    const metrics = new Set(
      samples.filter((s) => s.system === system).flatMap((s) => Object.keys(s.metrics)),
    );
    for (const metric of metrics) {
      const values = samples
        .filter((s) => s.system === system && s.valid && metric in s.metrics)
        .map((s) => s.metrics[metric] as number);
      (summary[system] as Record<string, number | null>)[metric] = median(values);
    }
  }
  return summary;
}

/** Systems with at least one invalid sample, with the reasons. */
export function invalidRows(samples: readonly Sample[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of samples.filter((x) => !x.valid)) {
    const list = out.get(s.system) ?? [];
    list.push(`${s.workload} run ${s.run}: ${s.reason}`);
    out.set(s.system, list);
  }
  return out;
}

function formatValue(metric: string, v: number): string {
  if (metric.startsWith("latency")) return v.toFixed(1);
  return Math.round(v).toLocaleString("en-US");
}

function cell(samples: readonly Sample[], summary: Summary, system: string, metric: string): string {
  const workloads = PRODUCED_BY[metric] ?? [];
  const mine = samples.filter((s) => s.system === system && workloads.includes(s.workload));
  if (mine.length === 0) return "—";
  if (mine.some((s) => !s.valid)) return "INVALID";
  const v = summary[system]?.[metric];
  return v === null || v === undefined ? "—" : formatValue(metric, v);
}

export function renderTable(
  systems: readonly SystemAdapter[],
  samples: readonly Sample[],
  summary: Summary,
): string {
  const header = `| system | ${COLUMNS.map((c) => c.title).join(" | ")} |`;
  const rule = `|---|${COLUMNS.map(() => "--:").join("|")}|`;
  const invalid = invalidRows(samples);
  const rows = systems
    .filter((sys) => samples.some((s) => s.system === sys.id))
    .map((sys) => {
      const label = invalid.has(sys.id) ? `${sys.label} **INVALID**` : sys.label;
      return `| ${label} | ${COLUMNS.map((c) => cell(samples, summary, sys.id, c.metric)).join(" | ")} |`;
    });
  return [header, rule, ...rows].join("\n");
}

export interface Ratio {
  soniq: string;
  peer: string;
  metric: string;
  /** > 1 means Soniq is better: Soniq ÷ peer for throughputs, peer ÷ Soniq for latencies. */
  value: number;
}

export function computeRatios(summary: Summary, soniqIds: readonly string[]): Ratio[] {
  const out: Ratio[] = [];
  for (const soniq of soniqIds) {
    for (const peer of RATIO_PEERS) {
      for (const c of COLUMNS) {
        const a = summary[soniq]?.[c.metric];
        const b = summary[peer]?.[c.metric];
        if (a == null || b == null || a === 0 || b === 0) continue;
        out.push({ soniq, peer, metric: c.metric, value: c.better === "higher" ? a / b : b / a });
      }
    }
  }
  return out;
}

export function renderRatios(ratios: readonly Ratio[]): string {
  if (ratios.length === 0) return "(no Soniq-on-Postgres row to compare)";
  const pairs = [...new Set(ratios.map((r) => `${r.soniq} vs ${r.peer}`))];
  const header = `| ratio (> 1: Soniq better) | ${COLUMNS.map((c) => c.title.replace(/ \(.*\)/, "")).join(" | ")} |`;
  const rule = `|---|${COLUMNS.map(() => "--:").join("|")}|`;
  const rows = pairs.map((pair) => {
    const cells = COLUMNS.map((c) => {
      const r = ratios.find((x) => `${x.soniq} vs ${x.peer}` === pair && x.metric === c.metric);
      return r ? `${r.value.toFixed(2)}x` : "—";
    });
    return `| ${pair} | ${cells.join(" | ")} |`;
  });
  return [header, rule, ...rows].join("\n");
}

export function machineInfo(postgres: string): Record<string, string | number> {
  const cpu = cpus();
  return {
    nproc: cpu.length,
    cpu: cpu[0]?.model ?? "?",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    postgres,
  };
}
