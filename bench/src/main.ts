/**
 * `pnpm bench`: Soniq against graphile-worker, pg-boss, Sidequest (same PostgreSQL), BullMQ (local Redis), the
 * SQLite queues and a hand-written limit; durable steps (W9, W9s) against DBOS Transact and OpenWorkflow.
 * Prints one markdown table plus ratios, writes JSON, and exits 1 when any row is invalid.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { now } from "./clock.js";
import { isPgError, recordIncident } from "./incidents.js";
import { cleanupLiveTargets } from "./measure.js";
import { parseOptions, USAGE } from "./options.js";
import { serverInfo } from "./pg-admin.js";
import { runPlan } from "./plan.js";
import {
  computeRatios,
  computeSelfRatios,
  invalidRows,
  machineInfo,
  renderRatios,
  renderSelfRatios,
  renderTable,
  summarise,
} from "./report.js";
import { availableSystems, SYSTEMS } from "./systems/index.js";

const BENCH_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2), process.env);
  if (opts === "help") {
    console.log(USAGE);
    return 0;
  }
  const server = await serverInfo(opts.databaseUrl);
  const wanted = opts.systems
    ? SYSTEMS.filter((s) => opts.systems?.includes(s.id))
    : SYSTEMS.filter((s) => !s.optional && !(opts.quick && s.notInQuick));
  if (opts.systems) {
    const unknown = opts.systems.filter((id) => !SYSTEMS.some((s) => s.id === id));
    if (unknown.length > 0) throw new Error(`unknown systems: ${unknown.join(", ")}`);
  }
  const { available, unavailable } = await availableSystems(wanted);
  for (const [id, why] of unavailable) log(`skipping ${id}: ${why}`);
  const machine = machineInfo(server.version);
  log(`machine: ${JSON.stringify(machine)}; postgres settings ${JSON.stringify(server.settings)}`);
  log(
    `runs ${opts.runs}, workloads ${opts.workloads.join(" ")}, systems ${available.map((s) => s.id).join(" ")}`,
  );

  const started = now();
  const samples = await runPlan(available, opts, log);
  const summary = summarise(samples);
  const soniqIds = available
    .filter((s) => s.storage !== "memory" && s.id.startsWith("soniq-"))
    .map((s) => s.id);
  const ratios = computeRatios(summary, soniqIds);
  const selfRatios = computeSelfRatios(summary);
  const invalid = invalidRows(samples);
  const elapsed = (now() - started) / 1000;

  console.log(renderTable(available, samples, summary));
  console.log();
  console.log(renderRatios(ratios));
  console.log();
  const own = renderSelfRatios(available, selfRatios);
  if (own) console.log(`${own}\n`);
  // A row that ran nothing (a durable-step engine in a run without W9) has no note either.
  for (const s of available)
    if (samples.some((x) => x.system === s.id)) console.log(`- ${s.label}: ${s.notes}`);
  for (const [id, why] of unavailable) console.log(`- ${id}: not run (${why})`);
  for (const [id, reasons] of invalid) console.log(`- INVALID ${id}: ${reasons.join("; ")}`);
  console.log(
    `\n${opts.quick ? "quick" : "full"} run, ${opts.runs} run(s) per cell (medians), ${elapsed.toFixed(0)} s; ` +
      `${machine.nproc} cores, ${machine.memoryGiB} GiB, PostgreSQL ${server.version}, Node ${machine.node}`,
  );

  const jsonPath = resolve(BENCH_ROOT, opts.jsonPath);
  mkdirSync(dirname(jsonPath), { recursive: true });
  const doc = {
    finishedAt: new Date().toISOString(),
    elapsedSeconds: elapsed,
    options: { quick: opts.quick, runs: opts.runs, workloads: opts.workloads, sizes: opts.sizes },
    machine,
    postgresSettings: server.settings,
    systems: available.map((s) => ({ id: s.id, label: s.label, storage: s.storage, notes: s.notes })),
    unavailable: Object.fromEntries(unavailable),
    summary,
    ratios,
    selfRatios,
    invalid: Object.fromEntries(invalid),
    samples,
  };
  writeFileSync(jsonPath, `${JSON.stringify(doc, null, 2)}\n`);
  log(`wrote ${jsonPath}`);
  return invalid.size > 0 ? 1 : 0;
}

// Ctrl-C: the measurement's own cleanup never runs, so drop its database here (the children die with us).
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: removing the running measurement's database or file`);
    void cleanupLiveTargets().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => fail(err),
);

/** The bench itself broke (not a row): report, remove what is still live, exit 2. */
function fail(err: unknown): void {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  void cleanupLiveTargets().finally(() => process.exit(2));
}

// A pg error nothing caught (an 'error' event of a connection inside a library) makes the running
// measurement INVALID (incidents.ts) instead of ending the bench; anything else is a bug of the harness.
process.on("uncaughtException", (err) => {
  if (isPgError(err)) recordIncident("uncaught in the bench", err);
  else fail(err);
});
