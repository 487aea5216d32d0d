/**
 * The output's columns: which metric each shows, which workloads produce it and which way is better,
 * grouped into sections (one table each, shown when any of its workloads ran), and the ratios of a system
 * against its own baseline row.
 */
import type { WorkloadId } from "./options.js";

export interface Column {
  title: string;
  metric: string;
  /** Throughputs are better higher, latencies and CPU time lower. */
  better: "higher" | "lower";
  /** The workloads that produce the metric (to know when a cell's workload had an invalid run). */
  workloads: readonly WorkloadId[];
  /** false: shown, never compared with a peer's (a setting of the measurement, not a result). */
  inRatios?: false;
  /**
   * The peer's metric a ratio compares with, when the peer has no row of this one: Soniq's asynchronous single
   * enqueue against the peers' single enqueue, each with its own default durability (BullMQ's Redis never waits
   * for its disk).
   */
  peerMetric?: string;
}

export interface Section {
  /** Printed above the table; the first section (W1-W4) has none, as before the optional workloads. */
  title: string | null;
  columns: readonly Column[];
}

function column(better: Column["better"]) {
  return (title: string, metric: string, workloads: readonly WorkloadId[]): Column => ({
    title,
    metric,
    better,
    workloads,
  });
}
const higher = column("higher");
const lower = column("lower");

export const SECTIONS: readonly Section[] = [
  {
    title: null,
    columns: [
      higher("W1 drain c10 (jobs/s)", "drain_c10", ["w1-c10"]),
      higher("W1 drain c50 (jobs/s)", "drain_c50", ["w1-c50"]),
      higher("W2 single (jobs/s)", "single_enqueue", ["w2-single"]),
      {
        ...higher("W2 single, durability async (jobs/s)", "single_enqueue_async", ["w2-single-async"]),
        peerMetric: "single_enqueue",
      },
      higher("W2 bulk (jobs/s)", "bulk_enqueue", ["w1-c10", "w1-c50"]),
      lower("W3 p50 (ms)", "latency_p50", ["w3"]),
      lower("W3 p95 (ms)", "latency_p95", ["w3"]),
      lower("W3 p99 (ms)", "latency_p99", ["w3"]),
      lower("W3 max (ms)", "latency_max", ["w3"]),
      higher("W4 fail (jobs/s)", "fail", ["w4"]),
      higher("W4 retry x3 (jobs/s)", "retry", ["w4-retry"]),
    ],
  },
  {
    title:
      "W4 cold start: the first tenth of W4's jobs (a fresh worker's first plans and stack traces), and the whole drain",
    columns: [
      higher("W4 fail, cold tenth (jobs/s)", "fail_cold", ["w4"]),
      higher("W4 fail, whole drain (jobs/s)", "fail_all", ["w4"]),
      higher("W4 retry x3, cold tenth (jobs/s)", "retry_cold", ["w4-retry"]),
      higher("W4 retry x3, whole drain (jobs/s)", "retry_all", ["w4-retry"]),
    ],
  },
  {
    title: "W8 workflow: a flow of N steps, N-1 parents fanning in to one (flow start to the last step done)",
    columns: [
      lower("W8 flow start (ms)", "flow_start_ms", ["w8"]),
      lower("W8 flow (ms)", "flow_ms", ["w8"]),
      lower("W8 per step (µs)", "flow_per_step_us", ["w8"]),
      lower("W8 plain jobs, per job (µs)", "flow_plain_per_job_us", ["w8"]),
    ],
  },
  {
    title:
      "CPU per job over the drain: worker processes, the store's server (PostgreSQL backends of the database, or Redis), WAL (server-wide)",
    columns: (
      [
        ["c10", "W1 c10", "w1-c10"],
        ["fail", "W4", "w4"],
      ] as const
    ).flatMap(([prefix, name, w]) => [
      lower(`${name} worker CPU (µs/job)`, `${prefix}_worker_cpu_us`, [w]),
      lower(`${name} store CPU (µs/job)`, `${prefix}_store_cpu_us`, [w]),
      lower(`${name} WAL (bytes/job)`, `${prefix}_wal_bytes`, [w]),
    ]),
  },
  {
    title:
      "W9 durable steps: jobs of 10 no-op steps at concurrency 10 (first handler start to the last job done), beside as many plain jobs on fresh storage; CPU per step includes the job's own claim and completion",
    columns: [
      higher("W9 steps/s", "w9_steps_per_sec", ["w9"]),
      higher("W9 jobs/s", "w9_jobs_per_sec", ["w9"]),
      lower("W9 DB CPU (µs/step)", "w9_store_cpu_us_per_step", ["w9"]),
      lower("W9 DB CPU a step adds (µs/step)", "w9_store_cpu_us_per_added_step", ["w9"]),
      lower("plain job DB CPU (µs/job)", "w9_plain_store_cpu_us_per_job", ["w9"]),
      lower("W9 worker CPU (µs/step)", "w9_worker_cpu_us_per_step", ["w9"]),
      lower("W9 WAL (bytes/step)", "w9_wal_bytes_per_step", ["w9"]),
      higher("plain jobs/s", "w9_plain_jobs_per_sec", ["w9"]),
    ],
  },
  {
    title:
      "W9s durable sleep: jobs that each sleep 2 s once at concurrency 10 (first run to the last job done), against the ideal: the sleep + a drain of as many plain jobs",
    columns: [
      lower("W9s total (ms)", "w9s_ms", ["w9s"]),
      { ...lower("W9s ideal (ms)", "w9s_ideal_ms", ["w9s"]), inRatios: false },
      lower("W9s ÷ ideal", "w9s_vs_ideal_x", ["w9s"]),
      { ...lower("handler runs a job", "w9s_runs_per_job_x", ["w9s"]), inRatios: false },
    ],
  },
  {
    title: "Growth: W5 / W5b drain with 1M / 10M retained done rows, W6 drain over many queues",
    columns: [
      higher("W5 drain, retained rows (jobs/s)", "drain_retained", ["w5"]),
      higher("W5b drain, 10M retained (jobs/s)", "drain_retained_10m", ["w5b"]),
      higher("W6 drain, many queues (jobs/s)", "drain_queues", ["w6"]),
    ],
  },
  {
    title:
      "Retention sweep after W5 / W5b: one sweep of the expired done rows (a tenth of the retained count), as maintenance runs it",
    columns: (
      [
        ["sweep", "W5", "w5"],
        ["sweep_10m", "W5b", "w5b"],
      ] as const
    ).flatMap(([prefix, name, w]) => [
      lower(`${name} sweep (ms)`, `${prefix}_ms`, [w]),
      higher(`${name} rows deleted`, `${prefix}_rows`, [w]),
      lower(`${name} sweep (µs/row)`, `${prefix}_us_per_row`, [w]),
      lower(`${name} sweep DB CPU (ms)`, `${prefix}_db_cpu_ms`, [w]),
    ]),
  },
  {
    title: "W7 steady arrival: pickup and database CPU",
    columns: (["w7-500", "w7-2000", "w7-5000"] as const).flatMap((w) => {
      const r = w.slice(3);
      return [
        lower(`${r}/s p50 (ms)`, `steady_${r}_p50`, [w]),
        lower(`${r}/s p99 (ms)`, `steady_${r}_p99`, [w]),
        lower(`${r}/s DB CPU (s per 1k jobs)`, `steady_${r}_db_cpu_per_1k`, [w]),
      ];
    }),
  },
  {
    title: "Scale-out: W1 c10 drain and W3 pickup with 1, 2 and 4 worker processes",
    columns: (["scale-1", "scale-2", "scale-4"] as const).flatMap((w) => {
      const p = w.slice(6);
      return [
        higher(`${p} proc drain (jobs/s)`, `scale_${p}_drain`, [w]),
        lower(`${p} proc W3 p50 (ms)`, `scale_${p}_p50`, [w]),
        lower(`${p} proc W3 p99 (ms)`, `scale_${p}_p99`, [w]),
      ];
    }),
  },
  {
    title: "Queue limits: W1 c10 drain on a limited default queue (limits above what the drain needs)",
    columns: [
      higher("W1 c10, concurrency 50 (jobs/s)", "drain_c10_conc50", ["w1-limited-conc"]),
      higher("W1 c10, rate 1M/s (jobs/s)", "drain_c10_rate", ["w1-limited-rate"]),
    ],
  },
];

export const COLUMNS: readonly Column[] = SECTIONS.flatMap((s) => s.columns);

/** A system's metric against its own baseline metric from the same run (> 1: faster than the baseline). */
export interface SelfRatio {
  title: string;
  metric: string;
  baseline: string;
}

export const SELF_RATIOS: readonly SelfRatio[] = [
  { title: "W2 single async ÷ durable", metric: "single_enqueue_async", baseline: "single_enqueue" },
  { title: "W5 ÷ W1 c10", metric: "drain_retained", baseline: "drain_c10" },
  { title: "W5b ÷ W1 c10", metric: "drain_retained_10m", baseline: "drain_c10" },
  { title: "W6 ÷ W1 c10", metric: "drain_queues", baseline: "drain_c10" },
  { title: "concurrency 50 ÷ W1 c10", metric: "drain_c10_conc50", baseline: "drain_c10" },
  { title: "rate limit ÷ W1 c10", metric: "drain_c10_rate", baseline: "drain_c10" },
  { title: "2 procs ÷ 1 (drain)", metric: "scale_2_drain", baseline: "scale_1_drain" },
  { title: "4 procs ÷ 1 (drain)", metric: "scale_4_drain", baseline: "scale_1_drain" },
  {
    title: "W9 DB CPU a step ÷ a plain job",
    metric: "w9_store_cpu_us_per_step",
    baseline: "w9_plain_store_cpu_us_per_job",
  },
  {
    title: "W9 DB CPU a step ÷ a W1 c10 job",
    metric: "w9_store_cpu_us_per_step",
    baseline: "c10_store_cpu_us",
  },
];

/** Milliseconds with one decimal, CPU seconds with three, everything else (rates, counts) whole. */
export function formatMetric(metric: string, v: number): string {
  if (/^latency_|_p\d+$|_ms$/.test(metric)) return v.toFixed(1);
  if (/_us_per_(row|step|added_step|job)$/.test(metric)) return v.toFixed(1);
  if (metric.endsWith("_x")) return v.toFixed(2);
  if (metric.endsWith("_cpu_us")) return Math.round(v).toLocaleString("en-US");
  if (metric.includes("_cpu")) return v.toFixed(3);
  return Math.round(v).toLocaleString("en-US");
}
