/** Command-line options of `pnpm bench`, and the sizes of each workload. */
import { parseArgs } from "node:util";
import { DEFAULT_DATABASE_URL } from "./pg-admin.js";

/** Run when `--workloads` is not given. */
export const DEFAULT_WORKLOADS = [
  "w1-c10",
  "w1-c50",
  "w2-single",
  "w2-single-async",
  "w3",
  "w4",
  "w4-retry",
  "w8",
] as const;
/** Run only when named (alone or through a group below): slower, or diagnostics of one feature. */
export const OPTIONAL_WORKLOADS = [
  "w5",
  "w5b",
  "w6",
  "w7-500",
  "w7-2000",
  "w7-5000",
  "scale-1",
  "scale-2",
  "scale-4",
  "w1-limited-conc",
  "w1-limited-rate",
  "w9",
  "w9s",
] as const;
export const WORKLOAD_IDS = [...DEFAULT_WORKLOADS, ...OPTIONAL_WORKLOADS] as const;
export type WorkloadId = (typeof WORKLOAD_IDS)[number];

/** Names on the command line that stand for several workloads, in this order. */
export const WORKLOAD_GROUPS: Readonly<Record<string, readonly WorkloadId[]>> = {
  retained: ["w5", "w5b"],
  w7: ["w7-500", "w7-2000", "w7-5000"],
  scale: ["scale-1", "scale-2", "scale-4"],
  "w1-limited": ["w1-limited-conc", "w1-limited-rate"],
  steps: ["w9", "w9s"],
};

/** W7's arrival rate (jobs/s) and the scale-out workloads' process count, from the id. */
export function steadyRate(w: WorkloadId): number | null {
  return w.startsWith("w7-") ? Number(w.slice(3)) : null;
}
export function scaleProcesses(w: WorkloadId): number | null {
  return w.startsWith("scale-") ? Number(w.slice(6)) : null;
}

export interface Sizes {
  drainJobs: number;
  bulkBatch: number;
  singleEnqueues: number;
  latencyJobs: number;
  latencyIntervalMs: number;
  failJobs: number;
  /** W5: finished jobs written into the table before the drain. */
  retainedRows: number;
  /** W5b: the same, ten times more. */
  retainedRowsLarge: number;
  /** W6: jobs, and the queues they are spread over. */
  queueJobs: number;
  queueCount: number;
  /** W7: how long jobs arrive at each rate. */
  steadySeconds: number;
  /** W8: steps of the fan-in flow (all but one are parents of the last). */
  flowSteps: number;
  /** W9: jobs of `STEPS_PER_JOB` durable steps each (and as many plain jobs for the comparison). */
  stepJobs: number;
  /** W9s: jobs that each sleep `SLEEP_MS` once (and as many plain jobs for the ideal's drain). */
  sleepJobs: number;
}

export interface BenchOptions {
  quick: boolean;
  runs: number;
  systems: string[] | null;
  workloads: WorkloadId[];
  databaseUrl: string;
  jsonPath: string;
  sizes: Sizes;
}

const FULL: Sizes = {
  drainJobs: 20_000,
  bulkBatch: 1_000,
  singleEnqueues: 3_000,
  latencyJobs: 1_000,
  latencyIntervalMs: 10,
  failJobs: 20_000,
  retainedRows: 1_000_000,
  retainedRowsLarge: 10_000_000,
  queueJobs: 20_000,
  queueCount: 1_000,
  steadySeconds: 30,
  flowSteps: 10_000,
  stepJobs: 2_000,
  sleepJobs: 1_000,
};

const QUICK: Sizes = {
  drainJobs: 2_000,
  bulkBatch: 500,
  singleEnqueues: 300,
  latencyJobs: 40,
  latencyIntervalMs: 10,
  failJobs: 400,
  retainedRows: 50_000,
  retainedRowsLarge: 200_000,
  queueJobs: 2_000,
  queueCount: 100,
  steadySeconds: 2,
  flowSteps: 500,
  stepJobs: 100,
  sleepJobs: 50,
};

export const USAGE = `Usage: pnpm bench [--quick] [--runs N] [--systems a,b] [--workloads w1-c10,w3] [--json FILE]
  --quick              small sizes, one run (a smoke test: it runs and verifies)
  --runs N             runs per system and workload; the table shows medians (default 3, quick 1)
  --systems LIST       system ids to run (default: every non-optional one; --quick leaves out the
                       slowest peers: sidequest-postgres, pg-boss-12, soniq-sqlite-node24)
  --workloads LIST     default set: ${DEFAULT_WORKLOADS.join(", ")} (quick: all but w1-c50)
                       optional: ${OPTIONAL_WORKLOADS.join(", ")}
                       groups: ${Object.entries(WORKLOAD_GROUPS)
                         .map(([g, ws]) => `${g} = ${ws.join(",")}`)
                         .join("; ")}
                       (a system a workload does not apply to skips it)
  --json FILE          where to write the results (default: bench/results/latest.json, quick: quick.json)
  --database-url URL   admin connection; one database is created per measurement (default: $DATABASE_URL
                       or ${DEFAULT_DATABASE_URL})`;

/** Workload ids and groups as named, groups expanded, each id once, in the order first named. */
export function expandWorkloads(names: readonly string[]): WorkloadId[] {
  const out: WorkloadId[] = [];
  for (const name of names) {
    const ids = WORKLOAD_GROUPS[name] ?? [name];
    for (const id of ids) {
      if (!(WORKLOAD_IDS as readonly string[]).includes(id)) {
        const groups = Object.keys(WORKLOAD_GROUPS).join(", ");
        throw new Error(`unknown workload "${id}"; known: ${WORKLOAD_IDS.join(", ")}; groups: ${groups}`);
      }
      if (!out.includes(id as WorkloadId)) out.push(id as WorkloadId);
    }
  }
  return out;
}

function list(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions | "help" {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      runs: { type: "string" },
      systems: { type: "string" },
      workloads: { type: "string" },
      json: { type: "string" },
      "database-url": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return "help";
  const quick = values.quick === true;
  const runs = values.runs === undefined ? (quick ? 1 : 3) : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive integer, got ${values.runs}`);
  // The smoke run skips the second drain: it checks that everything runs and verifies, not speed.
  const named = list(values.workloads);
  const workloads = named
    ? expandWorkloads(named)
    : quick
      ? DEFAULT_WORKLOADS.filter((w) => w !== "w1-c50")
      : [...DEFAULT_WORKLOADS];
  return {
    quick,
    runs,
    systems: list(values.systems),
    workloads,
    databaseUrl: values["database-url"] ?? env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    jsonPath: values.json ?? (quick ? "results/quick.json" : "results/latest.json"),
    sizes: quick ? QUICK : FULL,
  };
}
