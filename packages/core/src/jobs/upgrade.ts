/**
 * `soniq.jobs.upgrade(name)` (DESIGN.md section 20): the queued jobs and dead letters of one job whose args are
 * older than its definition's `version`, rewritten to it through the definition's upcasters and checked by its
 * schema, in keyset pages of `UPGRADE_CHUNK` rows, each page one backend write. A row whose upcast or schema check
 * fails is left as it was and reported; a row that changed meanwhile (claimed, replayed, purged, upgraded by
 * another call) is skipped by the write's guard. A running job is not rewritten: its run upcasts it, and a retry
 * keeps the args it had, for the next upgrade. One audit row `job.upgrade` for the whole call, with the counts.
 */

import { unsupported } from "../app/guard.js";
import { fail } from "../app/options.js";
import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import { checkJson } from "../common/json.js";
import { progressReporter } from "../common/progress-report.js";
import type { ArgsRewrite, GuardedBackend, VersionedTable } from "../contract/index.js";
import { type ActorOptions, actorOf, auditRecord, recordAudit } from "../observability/audit.js";
import { formatIssues, type RegisteredJob, validateWithSchema } from "./definition.js";
import { invalid } from "./queries.js";
import { upcastArgs } from "./versions.js";

/** Rows read and written per backend call. */
export const UPGRADE_CHUNK = 500;

/** How many failed rows a result lists (it counts them all). */
export const UPGRADE_FAILURES_SHOWN = 20;

export interface UpgradeOptions extends ActorOptions {
  /** Read and upcast every outdated row, write nothing: the counts (and failures) a real run would report. */
  dryRun?: boolean;
  /**
   * Called as rows are handled: `done` of `total` (the outdated rows when the call began), first with 0. Not called
   * on a dry run. What it throws is ignored.
   */
  onProgress?: (done: number, total: number) => void;
}

/** A row `upgrade` left as it was, and why. */
export interface UpgradeFailure {
  id: string;
  kind: "job" | "dead_letter";
  /** The row's args version. */
  version: number;
  /** The upcaster's or the schema's complaint. */
  error: string;
}

export interface UpgradeResult {
  name: string;
  /** The definition's version: what the rows were rewritten to. */
  version: number;
  /** Queued jobs rewritten (with `dryRun`: that would be). */
  jobs: number;
  /** Dead letters rewritten (with `dryRun`: that would be). */
  deadLetters: number;
  /** Rows whose upcast or schema check failed; each left unchanged (it dead-letters `invalid_arguments` if it runs). */
  failed: number;
  /** The first `UPGRADE_FAILURES_SHOWN` of them. */
  failures: UpgradeFailure[];
  dryRun: boolean;
}

const KIND: Record<VersionedTable, UpgradeFailure["kind"]> = { jobs: "job", deadLetters: "dead_letter" };

function definitionOf(rt: Runtime, name: unknown): RegisteredJob {
  const def = typeof name === "string" ? rt.registry.get(name) : undefined;
  if (def === undefined) {
    throw new SoniqError(
      "SONIQ_UNKNOWN_TASK_NAME",
      `jobs.upgrade: no job named ${JSON.stringify(String(name))} is defined on this Soniq instance; the upgrade needs ` +
        "its definition (its version, upcasters and schema). Define it in this process (the CLI: --module app.ts).",
      { context: { name: typeof name === "string" ? name : String(name) } },
    );
  }
  return def;
}

type Progress = NonNullable<UpgradeOptions["onProgress"]>;

function optionsOf(options: unknown): { dryRun: boolean; onProgress: Progress | null } {
  const o = (options ?? {}) as { dryRun?: unknown; onProgress?: unknown };
  if (o.dryRun !== undefined && typeof o.dryRun !== "boolean")
    throw invalid("jobs.upgrade(options).dryRun", "expected a boolean", o.dryRun);
  if (o.onProgress !== undefined && typeof o.onProgress !== "function")
    fail("jobs.upgrade(options)", ["onProgress must be a function (done, total)"]);
  return {
    dryRun: o.dryRun === true,
    onProgress: (o.onProgress as Progress | undefined) ?? null,
  };
}

/** `args` of version `from` as the definition's version, checked by its schema: the args to store, or why not. */
async function upgraded(
  def: RegisteredJob,
  args: unknown,
  from: number,
): Promise<{ ok: true; args: unknown } | { ok: false; error: string }> {
  const up = upcastArgs(def.name, def.options.upcast, args, from, def.options.version);
  if (!up.ok) return up;
  const json = checkJson(up.args);
  if (!json.ok) return { ok: false, error: `${json.problem.problem} at ${json.problem.path}` };
  const schema = def.options.schema;
  if (schema) {
    const parsed = await validateWithSchema(schema, json.value);
    if (!parsed.ok)
      return { ok: false, error: `Args fail the schema of "${def.name}": ${formatIssues(parsed.issues)}` };
  }
  // The upcast args are stored as the version's input (the schema's output is what a run hands the handler).
  return { ok: true, args: json.value };
}

export async function upgradeJobs(
  rt: Runtime,
  name: string,
  options?: UpgradeOptions,
): Promise<UpgradeResult> {
  const def = definitionOf(rt, name);
  const actor = actorOf(options, "jobs.upgrade(options)", ["dryRun", "onProgress"]);
  const { dryRun, onProgress } = optionsOf(options);
  const { backend } = rt;
  if (!backend.supports("versions")) throw unsupported(backend.name, "versions", "jobs.upgrade");
  const version = def.options.version;
  const result: UpgradeResult = {
    name: def.name,
    version,
    jobs: 0,
    deadLetters: 0,
    failed: 0,
    failures: [],
    dryRun,
  };
  const tick = dryRun || onProgress === null ? null : await progress(backend, def.name, version, onProgress);
  for (const table of ["jobs", "deadLetters"] as const) {
    const written = await upgradeTable(backend, def, table, dryRun, result, tick);
    if (table === "jobs") result.jobs = written;
    else result.deadLetters = written;
  }
  const params = { name: def.name, version, dryRun };
  const details = { jobs: result.jobs, deadLetters: result.deadLetters, failed: result.failed };
  await recordAudit(
    backend,
    auditRecord("job.upgrade", actor, def.name, params, dryRun ? "dry_run" : "ok", details),
  );
  return result;
}

/** Walk one table's outdated rows page by page; returns how many were (or, dry, would be) rewritten. */
async function upgradeTable(
  backend: GuardedBackend<unknown>,
  def: RegisteredJob,
  table: VersionedTable,
  dryRun: boolean,
  result: UpgradeResult,
  tick: ((n: number) => void) | null,
): Promise<number> {
  const version = def.options.version;
  let written = 0;
  let afterId: string | null = null;
  for (;;) {
    const page = { table, jobName: def.name, below: version, afterId, limit: UPGRADE_CHUNK };
    const rows = await backend.versions.list(page);
    const rewrites: ArgsRewrite[] = [];
    for (const row of rows) {
      const up = await upgraded(def, row.args, row.argsVersion);
      if (up.ok) rewrites.push({ id: row.id, fromVersion: row.argsVersion, args: up.args });
      else {
        result.failed++;
        if (result.failures.length < UPGRADE_FAILURES_SHOWN)
          result.failures.push({ id: row.id, kind: KIND[table], version: row.argsVersion, error: up.error });
      }
    }
    if (dryRun) written += rewrites.length;
    else if (rewrites.length > 0) written += await backend.versions.rewrite(table, rewrites, version);
    tick?.(rows.length);
    const last = rows[rows.length - 1];
    // Failed rows stay outdated: the next page starts after this one's last row, so none is read twice.
    if (rows.length < UPGRADE_CHUNK || last === undefined) return written;
    afterId = last.id;
  }
}

/** Counts the outdated rows, reports 0 of them, and returns the tick that reports each page handled. */
async function progress(
  backend: GuardedBackend<unknown>,
  jobName: string,
  below: number,
  onProgress: Progress,
): Promise<(n: number) => void> {
  const [jobs, deadLetters] = await Promise.all([
    backend.versions.count({ table: "jobs", jobName, below }),
    backend.versions.count({ table: "deadLetters", jobName, below }),
  ]);
  return progressReporter(onProgress, jobs + deadLetters);
}
