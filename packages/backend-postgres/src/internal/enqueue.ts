/**
 * Enqueue, one or many, in ONE statement each. A single job is a plain-parameter INSERT; a batch arrives as
 * typed column arrays (internal/job-columns.ts): a batch of plain jobs is one INSERT (below), any other batch
 * reads them once as its `input` and inserts each kind of job by its own data-modifying CTE. The
 * queues that got jobs are NOTIFYed (delivered on commit, so a rolled-back transactional enqueue wakes nobody).
 *
 * Dedup goes through the partial unique indexes, so it is race-free:
 * - dedupKey only: ON CONFLICT on the dedup_key index; DO UPDATE (a no-op write) locks and returns the
 *   existing row, so a duplicate gets the existing id even while racing another enqueue.
 * - unique only: the same on the (job_name, args_hash) index.
 * - both: a queued unique twin is looked up first and returned; otherwise the insert arbitrates on dedup_key.
 *   A race on the unique index can still raise 23505; outside a caller's transaction the statement is
 *   simply run again (it is all-or-nothing), inside one the error is reported.
 * Duplicates within one batch are resolved here first: Postgres cannot upsert the same row twice in a statement.
 *
 * `durability: "async"` (outside a caller's transaction only): every statement below has an `_async` twin that
 * reads `ASYNC_COMMIT` in its final SELECT, so its own implicit transaction commits without waiting for the WAL
 * flush (`synchronous_commit = off` for that transaction; the session keeps its setting). A database crash can
 * then lose the last enqueues (within ~3 x wal_writer_delay); a claim or settle of the job, being later, cannot
 * be durable without it, as every synchronous commit flushes the WAL up to itself.
 */

import { type EnqueueOptions, type EnqueueResult, type NewJob, SoniqError } from "@soniq/core/backend";
import { boolArray, textColumn } from "./array-literal.js";
import { ASYNC_COMMIT, type PgContext, query } from "./context.js";
import { isQueuedKeyConflict } from "./errors.js";
import { JOB_INSERT_COLUMNS, JOB_SELECT, jobParams, jobUnnest } from "./job-columns.js";
import { NEW_JOB_CHANNEL } from "./listen-client.js";
import { type TxRunner, txRunner } from "./tx.js";

const KINDS = ["plain", "dedup", "uniq", "both"] as const;
type Kind = (typeof KINDS)[number];

/** Which input rows (alias `i`) are of this kind. */
const KIND_FILTER: Record<Kind, string> = {
  plain: "i.dedup_key IS NULL AND NOT i.unique_job",
  dedup: "i.dedup_key IS NOT NULL AND NOT i.unique_job",
  uniq: "i.dedup_key IS NULL AND i.unique_job",
  both: "i.dedup_key IS NOT NULL AND i.unique_job",
};

const ON_DEDUP_KEY =
  "ON CONFLICT (dedup_key) WHERE status = 'queued' AND dedup_key IS NOT NULL DO UPDATE SET dedup_key = EXCLUDED.dedup_key";
const ON_UNIQUE =
  "ON CONFLICT (job_name, args_hash) WHERE status = 'queued' AND unique_job DO UPDATE SET unique_job = EXCLUDED.unique_job";

const INSERT_COLUMNS =
  'id, job_name, args, args_hash, queue, priority, max_attempts, scheduled_at, dedup_key, unique_job, producer_id, "group", ' +
  "trace_id, trace_context, args_version";
/** `INSERT_COLUMNS` read from the batch's `input` (alias `i`). */
const SELECT_INPUT = INSERT_COLUMNS.split(", ")
  .map((column) => `i.${column}`)
  .join(", ");
const RETURN_KEYS = "RETURNING id, queue, dedup_key, job_name, args_hash";

/**
 * A keyed batch's rows, read once (a CTE referenced by every insert is materialised): the columns of every bulk
 * job insert ($1-$12, `JOB_SELECT`), then the keys ($13 args_hash, $14 dedup_key, $15 unique_job), and `ord`,
 * the row's position in the batch (0-based). A JSON null in the args stays JSON null (`$2 -> n`).
 */
const INPUT_CTE = `input (ord, ${JOB_INSERT_COLUMNS}, args_hash, dedup_key, unique_job) AS (
  SELECT u.n::int - 1, ${JOB_SELECT}, u.args_hash, u.dedup_key, u.unique_job
  FROM ${jobUnnest([
    ["$13::text[]", "args_hash"],
    ["$14::text[]", "dedup_key"],
    ["$15::bool[]", "unique_job"],
  ])})`;

/**
 * A batch of plain jobs only (no dedupKey, not unique), the common bulk enqueue: nothing can conflict, so
 * every row is inserted under the id it was sent with (a duplicate id fails the statement) and no row needs
 * to come back; the statement answers one count. The queues to wake are read from the input. Returning and
 * matching every inserted row cost a sixth of a 1,000-job batch's time.
 *
 * The rows arrive in the form of every bulk job insert (internal/job-columns.ts: typed column arrays zipped by
 * `unnest`, the args as one JSON array read by position): PostgreSQL spent 6.4 µs a row on this against 9.0 µs
 * for the same rows as one jsonb array of objects (`jsonb_to_recordset` parses and sorts every object's keys,
 * then extracts each field).
 */
function plainBatchSql(async: boolean): string {
  return `WITH ins AS (INSERT INTO soniq_jobs (${JOB_INSERT_COLUMNS}, args_hash, dedup_key, unique_job)
  SELECT ${JOB_SELECT}, u.args_hash, NULL, false
  FROM ${jobUnnest([["$13::text[]", "args_hash"]])}
  RETURNING 1)
SELECT (SELECT count(*) FROM ins)::int AS inserted,
  (SELECT count(pg_notify('${NEW_JOB_CHANNEL}', q)) FROM (SELECT DISTINCT q FROM unnest($5::text[]) AS q) s)::int AS notified${async ? `\nFROM ${ASYNC_COMMIT}` : ""}`;
}
const PLAIN_BATCH_SQL = plainBatchSql(false);
const PLAIN_BATCH_ASYNC_SQL = plainBatchSql(true);

/** Whether the enqueue commits without waiting for the WAL flush (never inside a caller's transaction). */
const isAsync = (options: EnqueueOptions<unknown>) =>
  options.tx === undefined && options.durability === "async";
/** A named statement's name for its async twin. */
const named = (name: string, async: boolean) => (async ? `${name}_async` : name);

/** The plain batch statement's parameters, in its `$n` order (every id is canonical: no quoting needed). */
function plainBatchValues(jobs: readonly NewJob[]): unknown[] {
  return [...jobParams(jobs, true), textColumn(jobs.map((job) => job.argsHash))];
}

/** A job id as PostgreSQL prints a uuid (lower-case, hyphenated): the plain batch hands back the ids sent. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function insertCte(kind: Kind): string {
  const conflict = kind === "dedup" || kind === "both" ? ON_DEDUP_KEY : kind === "uniq" ? ON_UNIQUE : "";
  const notTwin = kind === "both" ? " AND NOT EXISTS (SELECT 1 FROM twin t WHERE t.ord = i.ord)" : "";
  return `ins_${kind} AS (INSERT INTO soniq_jobs (${INSERT_COLUMNS})
  SELECT ${SELECT_INPUT} FROM input i WHERE ${KIND_FILTER[kind]}${notTwin}
  ${conflict} ${RETURN_KEYS})`;
}

/**
 * The statement for a batch holding these kinds of jobs (a handful of shapes, each a named statement).
 * Each row comes back with the keys it was matched on; `resolveRows` maps it to its input position in JS
 * (a SQL join between the input and the inserted rows was quadratic under bad row estimates).
 */
function enqueueSql(kinds: readonly Kind[], async = false): string {
  const ctes = [INPUT_CTE];
  const results: string[] = [];
  if (kinds.includes("both")) {
    ctes.push(`twin AS (SELECT DISTINCT ON (i.ord) i.ord, j.id, j.queue FROM input i
  JOIN soniq_jobs j ON j.job_name = i.job_name AND j.args_hash = i.args_hash AND j.status = 'queued' AND j.unique_job
  WHERE ${KIND_FILTER.both} ORDER BY i.ord, j.created_at)`);
    results.push(
      "SELECT 'twin' AS kind, ord, id, queue, NULL::text AS dedup_key, NULL::text AS job_name, NULL::text AS args_hash FROM twin",
    );
  }
  for (const kind of kinds) {
    ctes.push(insertCte(kind));
    results.push(
      `SELECT '${kind}' AS kind, NULL::int AS ord, id, queue, dedup_key, job_name, args_hash FROM ins_${kind}`,
    );
  }
  ctes.push(`results AS (${results.join("\n  UNION ALL ")})`);
  ctes.push(
    `notified AS (SELECT count(pg_notify('${NEW_JOB_CHANNEL}', q)) AS n FROM (SELECT DISTINCT queue AS q FROM results) s)`,
  );
  return `WITH ${ctes.join(",\n")}\nSELECT r.kind, r.ord, r.id, r.dedup_key, r.job_name, r.args_hash FROM results r, notified${async ? `, ${ASYNC_COMMIT}` : ""}`;
}

interface ResultRow {
  kind: string;
  ord: number | null;
  id: string;
  dedup_key: string | null;
  job_name: string | null;
  args_hash: string | null;
}

const uniqueKey = (jobName: string, argsHash: string | null) => `${jobName}\u0000${argsHash ?? ""}`;

/** The id each sent job resolved to, by position in `sent`. */
function resolveRows(sent: readonly NewJob[], rows: readonly ResultRow[]): (string | undefined)[] {
  const byId = new Map<string, number>();
  const byDedupKey = new Map<string, number>();
  const byUniqueKey = new Map<string, number>();
  sent.forEach((job, ord) => {
    const kind = kindOf(job);
    if (kind === "plain") byId.set(job.id.toLowerCase(), ord);
    if (kind === "dedup" || kind === "both") byDedupKey.set(job.dedupKey ?? "", ord);
    if (kind === "uniq") byUniqueKey.set(uniqueKey(job.jobName, job.argsHash), ord);
  });
  const ids: (string | undefined)[] = [];
  for (const row of rows) {
    const id = String(row.id);
    let ord: number | undefined;
    if (row.kind === "twin") ord = Number(row.ord);
    else if (row.kind === "plain") ord = byId.get(id);
    else if (row.kind === "uniq") ord = byUniqueKey.get(uniqueKey(String(row.job_name), row.args_hash));
    else ord = byDedupKey.get(String(row.dedup_key));
    if (ord !== undefined) ids[ord] = id;
  }
  return ids;
}

function kindOf(job: NewJob): Kind {
  if (job.dedupKey !== null) return job.unique ? "both" : "dedup";
  return job.unique ? "uniq" : "plain";
}

/**
 * Jobs to send (the first of each key) and, for every input position, the index of the sent job it
 * resolves to. A later job sharing a dedup key or a unique key with an earlier one gets the earlier's result.
 */
function resolveBatch(jobs: readonly NewJob[]): { sent: NewJob[]; target: number[] } {
  const sent: NewJob[] = [];
  const target: number[] = [];
  const byKey = new Map<string, number>();
  for (const job of jobs) {
    const keys: string[] = [];
    if (job.dedupKey !== null) keys.push(`d:${job.dedupKey}`);
    if (job.unique) keys.push(`u:${uniqueKey(job.jobName, job.argsHash)}`);
    const earlier = keys.map((k) => byKey.get(k)).find((i) => i !== undefined);
    if (earlier !== undefined) {
      target.push(earlier);
      continue;
    }
    for (const k of keys) byKey.set(k, sent.length);
    target.push(sent.length);
    sent.push(job);
  }
  return { sent, target };
}

/** The keyed batch statement's parameters, in its `$n` order (`INPUT_CTE`). */
function keyedBatchValues(jobs: readonly NewJob[]): unknown[] {
  return [
    ...jobParams(
      jobs,
      jobs.every((job) => CANONICAL_UUID.test(job.id)),
    ),
    textColumn(jobs.map((job) => job.argsHash)),
    textColumn(jobs.map((job) => job.dedupKey)),
    boolArray(jobs.map((job) => job.unique)),
  ];
}

async function runOnPool(ctx: PgContext, kinds: Kind[], values: unknown[], async: boolean) {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await query<ResultRow>(ctx, "enqueue", {
        name: named(`soniq_enqueue_${kinds.join("_")}`, async),
        text: enqueueSql(kinds, async),
        values,
      });
      return res.rows;
    } catch (err) {
      if (attempt >= 3 || !isQueuedKeyConflict(err)) throw err;
    }
  }
}

function noRow(job: NewJob): SoniqError {
  return new SoniqError("SONIQ_BACKEND_ERROR", `enqueue: PostgreSQL returned no row for job ${job.id}.`, {
    context: { id: job.id },
  });
}

export async function enqueueMany<TTx>(
  ctx: PgContext,
  jobs: readonly NewJob[],
  options: EnqueueOptions<TTx> = {},
): Promise<EnqueueResult[]> {
  if (jobs.length === 0) return [];
  const runner: TxRunner | undefined = options.tx === undefined ? undefined : txRunner(options.tx, "enqueue");
  if (jobs.every((job) => kindOf(job) === "plain" && CANONICAL_UUID.test(job.id))) {
    return enqueuePlain(ctx, jobs, runner, isAsync(options));
  }
  const { sent, target } = resolveBatch(jobs);
  const kinds = KINDS.filter((kind) => sent.some((job) => kindOf(job) === kind));
  const values = keyedBatchValues(sent);
  const rows = runner
    ? ((await runner(enqueueSql(kinds), values)) as unknown as ResultRow[])
    : await runOnPool(ctx, kinds, values, isAsync(options));
  const ids = resolveRows(sent, rows);
  return jobs.map((job, i) => {
    const id = ids[target[i] ?? -1];
    if (id === undefined) throw noRow(job);
    return { id, deduplicated: id !== job.id.toLowerCase() };
  });
}

async function enqueuePlain(
  ctx: PgContext,
  jobs: readonly NewJob[],
  runner: TxRunner | undefined,
  async: boolean,
): Promise<EnqueueResult[]> {
  const values = plainBatchValues(jobs);
  const rows = runner
    ? ((await runner(PLAIN_BATCH_SQL, values)) as unknown as { inserted: number }[])
    : (
        await query<{ inserted: number }>(ctx, "enqueue", {
          name: named("soniq_enqueue_batch_plain", async),
          text: async ? PLAIN_BATCH_ASYNC_SQL : PLAIN_BATCH_SQL,
          values,
        })
      ).rows;
  const inserted = rows[0]?.inserted;
  if (inserted !== jobs.length) {
    throw new SoniqError(
      "SONIQ_BACKEND_ERROR",
      `enqueue: PostgreSQL inserted ${inserted ?? "no"} rows for a batch of ${jobs.length} jobs.`,
      { context: { inserted: inserted ?? null, sent: jobs.length } },
    );
  }
  return jobs.map((job) => ({ id: job.id, deduplicated: false }));
}

// One job, the common case: plain parameters instead of a batch statement (the batch statement costs
// several times more to plan and run for a single row). Jobs with both keys take the batch path.
const SINGLE_VALUES =
  "$1::uuid, $2, $3::jsonb, $4, $5, $6::int, $7::int, COALESCE($8::timestamptz, now()), $9, $10::bool, $11, $12, $13, $14::jsonb, $15::int";

function singleSql(kind: Exclude<Kind, "both">, async = false): string {
  const conflict = kind === "dedup" ? ON_DEDUP_KEY : kind === "uniq" ? ON_UNIQUE : "";
  return `WITH ins AS (INSERT INTO soniq_jobs (${INSERT_COLUMNS}) VALUES (${SINGLE_VALUES})
  ${conflict} RETURNING id, queue)
SELECT id, pg_notify('${NEW_JOB_CHANNEL}', queue) FROM ins${async ? `, ${ASYNC_COMMIT}` : ""}`;
}

function singleValues(job: NewJob): unknown[] {
  return [
    job.id,
    job.jobName,
    JSON.stringify(job.args),
    job.argsHash,
    job.queue,
    job.priority,
    job.maxAttempts,
    job.scheduledAt,
    job.dedupKey,
    job.unique,
    job.producerId,
    job.group,
    job.traceId,
    job.traceContext === null ? null : JSON.stringify(job.traceContext),
    job.argsVersion ?? null,
  ];
}

export async function enqueue<TTx>(
  ctx: PgContext,
  job: NewJob,
  options: EnqueueOptions<TTx> = {},
): Promise<EnqueueResult> {
  const kind = kindOf(job);
  if (kind === "both") {
    const [result] = await enqueueMany(ctx, [job], options);
    if (!result) throw noRow(job);
    return result;
  }
  const async = isAsync(options);
  const text = singleSql(kind, async);
  const values = singleValues(job);
  const name = named(`soniq_enqueue_one_${kind}`, async);
  const rows =
    options.tx === undefined
      ? (await query<{ id: string }>(ctx, "enqueue", { name, text, values })).rows
      : await txRunner(options.tx, "enqueue")(text, values);
  const id = rows[0]?.id;
  if (id === undefined) throw noRow(job);
  return { id: String(id), deduplicated: String(id) !== job.id.toLowerCase() };
}
