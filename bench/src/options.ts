/** Command-line options of `pnpm bench`, and the sizes of each workload. */
import { parseArgs } from "node:util";
import { DEFAULT_DATABASE_URL } from "./pg-admin.js";

export const WORKLOAD_IDS = ["w1-c10", "w1-c50", "w2-single", "w3", "w4"] as const;
export type WorkloadId = (typeof WORKLOAD_IDS)[number];

export interface Sizes {
  drainJobs: number;
  bulkBatch: number;
  singleEnqueues: number;
  latencyJobs: number;
  latencyIntervalMs: number;
  failJobs: number;
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
  latencyJobs: 300,
  latencyIntervalMs: 10,
  failJobs: 2_000,
};

const QUICK: Sizes = {
  drainJobs: 2_000,
  bulkBatch: 500,
  singleEnqueues: 300,
  latencyJobs: 40,
  latencyIntervalMs: 10,
  failJobs: 200,
};

export const USAGE = `Usage: pnpm bench [--quick] [--runs N] [--systems a,b] [--workloads w1-c10,w3] [--json FILE]
  --quick              small sizes, one run (a smoke test: it runs and verifies)
  --runs N             runs per system and workload; the table shows medians (default 3, quick 1)
  --systems LIST       system ids to run (default: all)
  --workloads LIST     ${WORKLOAD_IDS.join(", ")} (default: all; quick: all but w1-c50)
  --json FILE          where to write the results (default: bench/results/latest.json, quick: quick.json)
  --database-url URL   admin connection; one database is created per measurement (default: $DATABASE_URL
                       or ${DEFAULT_DATABASE_URL})`;

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
  const workloads =
    list(values.workloads) ?? (quick ? WORKLOAD_IDS.filter((w) => w !== "w1-c50") : [...WORKLOAD_IDS]);
  for (const w of workloads) {
    if (!(WORKLOAD_IDS as readonly string[]).includes(w)) throw new Error(`unknown workload "${w}"`);
  }
  return {
    quick,
    runs,
    systems: list(values.systems),
    workloads: workloads as WorkloadId[],
    databaseUrl: values["database-url"] ?? env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    jsonPath: values.json ?? (quick ? "results/quick.json" : "results/latest.json"),
    sizes: quick ? QUICK : FULL,
  };
}
