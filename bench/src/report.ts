/** Turns samples into medians, one markdown table, the ratios, and the JSON document. */
import { cpus, totalmem } from "node:os";
import { COLUMNS, type Column, formatMetric, SECTIONS, SELF_RATIOS, type Section } from "./columns.js";
import type { Sample } from "./plan.js";
import type { SystemAdapter } from "./systems/types.js";

/**
 * Which peers each Soniq row is compared with: the rows on the same runtime and the same kind of storage
 * (a ratio should not be one of runtimes). BullMQ runs on the harness's Node; the limit is the ceiling for
 * both Postgres rows.
 */
export const RATIO_PEERS = {
  postgres: ["graphile-fast", "pg-boss", "bullmq", "limit", "dbos", "openworkflow"],
  postgresNode24: ["graphile-018-fast", "pg-boss-12", "sidequest-postgres", "limit"],
  sqlite: ["liteque", "plainjob"],
  sqliteNode24: [],
} as const satisfies Record<string, readonly string[]>;

/** The peers of a Soniq row, from its id (`soniq-sqlite...` on SQLite, `...-node24` on Node 24). */
export function ratioPeers(soniqId: string): readonly string[] {
  const node24 = soniqId.endsWith("-node24");
  if (soniqId.startsWith("soniq-sqlite")) return node24 ? RATIO_PEERS.sqliteNode24 : RATIO_PEERS.sqlite;
  return node24 ? RATIO_PEERS.postgresNode24 : RATIO_PEERS.postgres;
}

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

function cell(samples: readonly Sample[], summary: Summary, system: string, column: Column): string {
  const mine = samples.filter((s) => s.system === system && column.workloads.includes(s.workload));
  if (mine.length === 0) return "—";
  if (mine.some((s) => !s.valid)) return "INVALID";
  const v = summary[system]?.[column.metric];
  return v === null || v === undefined ? "—" : formatMetric(column.metric, v);
}

function withTitle(title: string | null, table: string): string {
  return title ? `**${title}**\n\n${table}` : table;
}

function tableHead(first: string, columns: readonly Column[], title: (c: Column) => string): string[] {
  return [`| ${first} | ${columns.map(title).join(" | ")} |`, `|---|${columns.map(() => "--:").join("|")}|`];
}

/** One markdown table per section whose workloads ran, blank-line separated. */
export function renderTable(
  systems: readonly Pick<SystemAdapter, "id" | "label">[],
  samples: readonly Sample[],
  summary: Summary,
): string {
  const invalid = invalidRows(samples);
  const ran = (sec: Section) => (s: Sample) => sec.columns.some((c) => c.workloads.includes(s.workload));
  return SECTIONS.filter((sec) => samples.some(ran(sec)))
    .map((sec) => {
      const rows = systems
        .filter((sys) => samples.some((s) => s.system === sys.id && ran(sec)(s)))
        .map((sys) => {
          const label = invalid.has(sys.id) ? `${sys.label} **INVALID**` : sys.label;
          return `| ${label} | ${sec.columns.map((c) => cell(samples, summary, sys.id, c)).join(" | ")} |`;
        });
      return withTitle(sec.title, [...tableHead("system", sec.columns, (c) => c.title), ...rows].join("\n"));
    })
    .join("\n\n");
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
    for (const peer of ratioPeers(soniq)) {
      for (const c of COLUMNS) {
        if (c.inRatios === false) continue;
        const a = summary[soniq]?.[c.metric];
        const b = summary[peer]?.[c.peerMetric ?? c.metric];
        if (a == null || b == null || a === 0 || b === 0) continue;
        out.push({ soniq, peer, metric: c.metric, value: c.better === "higher" ? a / b : b / a });
      }
    }
  }
  return out;
}

/** One ratio table per section with any ratio. */
export function renderRatios(ratios: readonly Ratio[]): string {
  if (ratios.length === 0) return "(no Soniq row with a peer to compare)";
  const tables = SECTIONS.map((sec) => {
    const mine = ratios.filter((r) => sec.columns.some((c) => c.metric === r.metric));
    if (mine.length === 0) return null;
    const pairs = [...new Set(mine.map((r) => `${r.soniq} vs ${r.peer}`))];
    const rows = pairs.map((pair) => {
      const cells = sec.columns.map((c) => {
        const r = mine.find((x) => `${x.soniq} vs ${x.peer}` === pair && x.metric === c.metric);
        return r ? `${r.value.toFixed(2)}x` : "—";
      });
      return `| ${pair} | ${cells.join(" | ")} |`;
    });
    const head = tableHead("ratio (> 1: Soniq better)", sec.columns, (c) => c.title.replace(/ \(.*\)/, ""));
    return withTitle(sec.title, [...head, ...rows].join("\n"));
  });
  return tables.filter((t) => t !== null).join("\n\n");
}

export interface SelfRatioValue {
  system: string;
  metric: string;
  baseline: string;
  /** metric ÷ baseline, both medians of this run. */
  value: number;
}

/** Each system's optional-workload figures against its own baseline row of the same run. */
export function computeSelfRatios(summary: Summary): SelfRatioValue[] {
  const out: SelfRatioValue[] = [];
  for (const [system, metrics] of Object.entries(summary)) {
    for (const r of SELF_RATIOS) {
      const a = metrics[r.metric];
      const b = metrics[r.baseline];
      if (a == null || b == null || b === 0) continue;
      out.push({ system, metric: r.metric, baseline: r.baseline, value: a / b });
    }
  }
  return out;
}

/** Empty when no system has both sides of any self ratio (e.g. w5 run without w1-c10). */
export function renderSelfRatios(
  systems: readonly Pick<SystemAdapter, "id" | "label">[],
  values: readonly SelfRatioValue[],
): string {
  const cols = SELF_RATIOS.filter((r) =>
    values.some((v) => v.metric === r.metric && v.baseline === r.baseline),
  );
  if (cols.length === 0) return "";
  const rows = systems
    .filter((sys) => values.some((v) => v.system === sys.id))
    .map((sys) => {
      const cells = cols.map((c) => {
        const v = values.find(
          (x) => x.system === sys.id && x.metric === c.metric && x.baseline === c.baseline,
        );
        return v ? `${v.value.toFixed(2)}x` : "—";
      });
      return `| ${sys.label} | ${cells.join(" | ")} |`;
    });
  const head = [
    `| against its own row (same run) | ${cols.map((c) => c.title).join(" | ")} |`,
    `|---|${cols.map(() => "--:").join("|")}|`,
  ];
  return [...head, ...rows].join("\n");
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
