/**
 * `soniq.deadLetters`: list, inspect, replay, purge and export dead-lettered jobs.
 * Replay mints a fresh queued job (new id, attempts 0) and keeps the dead-letter row, bumping its
 * resurrection count; it requires the job name to be defined on this instance unless the instance
 * allows unknown names, so a replayed job does not land where no worker can run it.
 */

import { unsupported } from "../app/guard.js";
import { enqueueOptionProblems, fail } from "../app/options.js";
import type { Runtime } from "../app/runtime.js";
import { isSoniqError, SoniqError } from "../common/errors.js";
import { newJobId } from "../common/ids.js";
import { checkJson } from "../common/json.js";
import { JOB_NAME_PATTERN } from "../common/names.js";
import type { DeadLetterJob } from "../common/types.js";
import type { ReplayRequest as BackendReplayRequest, ReplaySteps } from "../contract/index.js";
import { prepareJob, targetOf } from "../jobs/definition.js";
import {
  after,
  type DeadLetterFilter,
  deadLetterListQuery,
  inListOrder,
  invalid,
  MAX_PAGE_SIZE,
} from "../jobs/queries.js";
import { type ActorOptions, actorOf, audited, auditRecord, recordAudit } from "../observability/audit.js";
import type { Redactor } from "../observability/redact.js";
import { produce } from "../observability/tracing.js";
import { OCCURRENCE_SEPARATOR } from "../steps/programs.js";
import { resurrectedData } from "../webhooks/payloads.js";
import { type BulkOptions, type BulkResult, bulk, type DeadLetterBulkFilter } from "./bulk.js";

export interface ReplayOptions extends ActorOptions {
  queue?: string;
  priority?: number;
  /** When the new job becomes due (or `delayMs`; not both). Default: now. */
  runAt?: Date;
  delayMs?: number;
  /**
   * The dead letter's durable steps (DESIGN.md section 19): `"keep"` (default) moves its done checkpoints to the
   * new job, which resumes at the step that failed; `"discard"` starts clean. Unconsumed signals move either way.
   */
  steps?: "keep" | "discard";
  /**
   * Steps recorded done on the new job with these values (a failed step resolved by hand): `{ name: value }`,
   * the occurrence name as `jobs.steps` shows it. Audited with the values through `redact`.
   */
  resolve?: Record<string, unknown>;
}

/** What a replay can change; `dedupKey`, `unique` and `tx` mean nothing for a replay and are refused. */
const REPLAY_KEYS = ["queue", "priority", "runAt", "delayMs"];
/** A replay's step options (checked apart: they are not enqueue options). */
const STEP_KEYS = ["steps", "resolve"];

/** What a replay's options change in the new job (null: the dead letter's own, or now). */
interface Overrides {
  queue: string | null;
  priority: number | null;
  scheduledAt: Date | null;
}

/** A replay's checked options: who, and what the new job gets. */
interface ReplayRequest extends Overrides {
  actor: string;
  steps: ReplaySteps;
}

/**
 * Checks the options of `replay` (or of `replayWhere`, whose `extraKeys` are its bulk options): an object
 * of REPLAY_KEYS and `actor` only, each valid as for enqueue (`SONIQ_INVALID_OPTIONS` otherwise).
 */
function replayRequest(options: unknown, what: string, extraKeys: readonly string[] = []): ReplayRequest {
  const keys = [...REPLAY_KEYS, ...STEP_KEYS, "actor", ...extraKeys];
  const given = options === undefined ? {} : options;
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      `${what} options must be an object { ${keys.join(", ")} }.`,
    );
  }
  const overrides: Record<string, unknown> = {};
  const refused: string[] = [];
  for (const [key, value] of Object.entries(given)) {
    if (REPLAY_KEYS.includes(key)) overrides[key] = value;
    else if (!keys.includes(key)) refused.push(key);
  }
  const stepProblems: string[] = [];
  const steps = replaySteps(given as Record<string, unknown>, what, stepProblems);
  const problems = [
    ...refused.map((k) => `${k} is not a ${what} option (${what} takes ${keys.join(", ")})`),
    ...(refused.length > 0 ? [] : enqueueOptionProblems(overrides)),
    ...stepProblems,
  ];
  if (problems.length > 0) fail(`${what} options`, problems);
  const actor = actorOf(given, `deadLetters.${what}(options)`, [...REPLAY_KEYS, ...STEP_KEYS, ...extraKeys]);
  const { queue, priority, runAt, delayMs } = overrides as Omit<ReplayOptions, "actor">;
  let scheduledAt = runAt ?? null;
  if (delayMs !== undefined && delayMs > 0) scheduledAt = new Date(Date.now() + delayMs);
  return { actor, queue: queue ?? null, priority: priority ?? null, scheduledAt, steps };
}

/** `steps` and `resolve`, checked: a mode of the two, an object of step names (`name` or `name#n`) to JSON. */
function replaySteps(given: Record<string, unknown>, what: string, problems: string[]): ReplaySteps {
  const mode = given.steps;
  if (mode !== undefined && mode !== "keep" && mode !== "discard") {
    problems.push(`steps must be "keep" or "discard" (${what})`);
  }
  const resolve: { name: string; value: unknown }[] = [];
  const given_ = given.resolve;
  if (given_ !== undefined) {
    if (typeof given_ !== "object" || given_ === null || Array.isArray(given_)) {
      problems.push("resolve must be an object { stepName: value }");
    } else {
      for (const [name, value] of Object.entries(given_)) {
        const [base, n, extra] = name.split(OCCURRENCE_SEPARATOR);
        if (
          base === undefined ||
          !JOB_NAME_PATTERN.test(base) ||
          extra !== undefined ||
          (n !== undefined && !/^[1-9][0-9]*$/.test(n))
        ) {
          problems.push(`resolve.${name}: not a step name (a name like "charge_card", or "charge_card#2")`);
          continue;
        }
        const json = checkJson(value === undefined ? null : value);
        if (!json.ok) problems.push(`resolve.${name}: ${json.problem.problem} at ${json.problem.path}`);
        else resolve.push({ name, value: json.value });
      }
    }
  }
  return { keep: mode !== "discard", resolve };
}

/** The filter's job name (what a function `redact` is told a bulk replay's resolved values belong to). */
function jobNameOf(filter: unknown): string {
  const name = (filter as { jobName?: unknown } | null | undefined)?.jobName;
  return typeof name === "string" ? name : "";
}

/** The audit params of a replay's step options: the mode, and the resolved values through `redact`. */
function stepParams(steps: ReplaySteps, jobName: string, redact: Redactor): Record<string, unknown> {
  if (steps.keep && steps.resolve.length === 0) return {};
  return {
    steps: steps.keep ? "keep" : "discard",
    ...(steps.resolve.length > 0
      ? {
          resolve: Object.fromEntries(
            steps.resolve.map(({ name, value }) => [name, redact.value("result", value, jobName)]),
          ),
        }
      : {}),
  };
}

/** What `export` writes to: a node Writable, or anything with the same `write`/`once("drain")`. */
export interface LineSink {
  write(chunk: string): boolean;
  once(event: "drain", listener: () => void): unknown;
}

export class DeadLetterService {
  constructor(private readonly rt: Runtime) {}

  /**
   * Newest first (by `movedToDeadLetterAt` to the millisecond, then id). `limit` defaults to 100 (at most
   * 1000). Page with `after: lastRow` (older) or `before: firstRow` (newer); `offset` still works.
   */
  async list(filter?: DeadLetterFilter): Promise<DeadLetterJob[]> {
    const query = deadLetterListQuery(filter);
    return inListOrder(query, await this.rt.backend.deadLetters.list(query));
  }

  get(id: string): Promise<DeadLetterJob | null> {
    return this.rt.backend.deadLetters.get(id);
  }

  /** Returns the new job's id, or null when there is no dead-letter row with this id. */
  async replay(id: string, options?: ReplayOptions): Promise<string | null> {
    const { actor, queue, priority, scheduledAt, steps } = replayRequest(options, "replay");
    const replayId = newJobId();
    const row = await this.rt.backend.deadLetters.get(id);
    const params = {
      queue,
      priority,
      runAt: scheduledAt?.toISOString() ?? null,
      ...stepParams(steps, row?.jobName ?? "", this.rt.options.redact),
    };
    const record = auditRecord("dead_letter.replay", actor, String(id), params, "ok", { newId: replayId });
    if (!row) {
      await recordAudit(this.rt.backend, { ...record, outcome: "not_found", details: null });
      return null;
    }
    const request = await this.#prepare(row, { queue, priority, scheduledAt }, replayId, steps);
    const newId = await audited(
      this.rt.backend,
      record,
      (r) => this.#replayTraced(row, request, (q) => this.rt.backend.deadLetters.replay(id, q, r)),
      (result) => result !== null,
    );
    if (newId) for (const worker of this.rt.workers) worker.nudge();
    if (newId && request.deliveries) this.rt.webhooks.notify();
    return newId;
  }

  /** Deletes the dead-letter row. False when there was none. */
  async purge(id: string, options?: ActorOptions): Promise<boolean> {
    const record = auditRecord(
      "dead_letter.purge",
      actorOf(options, "deadLetters.purge(options)"),
      String(id),
      null,
    );
    return audited(this.rt.backend, record, (r) => this.rt.backend.deadLetters.purge(id, r), Boolean);
  }

  /**
   * Replays every dead letter matching `filter` (chunked; one audit row `dead_letter.replay_where` with the
   * count). With `dryRun`, counts them and changes nothing.
   */
  async replayWhere(
    filter: DeadLetterBulkFilter,
    options?: BulkOptions & Omit<ReplayOptions, "actor">,
  ): Promise<BulkResult> {
    const { actor, queue, priority, scheduledAt, steps } = replayRequest(options, "replayWhere", [
      "dryRun",
      "onProgress",
    ]);
    const bulkOptions = { dryRun: options?.dryRun, actor, onProgress: options?.onProgress };
    return bulk(
      this.rt.backend,
      "replay_where",
      filter,
      bulkOptions,
      async (row) => {
        let request: BackendReplayRequest;
        try {
          request = await this.#prepare(row, { queue, priority, scheduledAt }, newJobId(), steps);
        } catch (err) {
          if (isSoniqError(err)) return "refused";
          throw err;
        }
        const newId = await this.#replayTraced(row, request, (q) =>
          this.rt.backend.deadLetters.replay(row.id, q),
        );
        if (newId) for (const worker of this.rt.workers) worker.nudge();
        if (newId && request.deliveries) this.rt.webhooks.notify();
        return newId !== null;
      },
      stepParams(steps, jobNameOf(filter), this.rt.options.redact),
    );
  }

  /**
   * A replay's write through the producer hooks: the new job gets the trace they send (linked to the dead
   * letter's), or, with no hook, the dead letter's own trace, so a traced worker continues the job's trace.
   */
  #replayTraced(
    row: DeadLetterJob,
    request: BackendReplayRequest,
    write: (request: BackendReplayRequest) => Promise<string | null>,
  ): Promise<string | null> {
    if (this.rt.producers.length === 0) return write(request);
    const job = { id: request.newId, jobName: row.jobName, queue: request.queue ?? row.queue };
    const links = row.traceContext ? [row.traceContext] : [];
    const event = () => ({ origin: "replay" as const, jobs: [job], links });
    return produce(this.rt.producers, event, [request], () => write(request));
  }

  /**
   * The replayed job, prepared as `enqueue` prepares one: its name must be defined here (unless the
   * instance allows unknown names), its args must pass the job's schema, the overrides are checked; it keeps
   * the dead letter's queue, priority and max attempts unless overridden. Throws the enqueue's SoniqError.
   */
  async #prepare(
    row: DeadLetterJob,
    overrides: Overrides,
    newId: string,
    steps: ReplaySteps,
  ): Promise<BackendReplayRequest> {
    if (!this.rt.registry.has(row.jobName) && !this.rt.options.allowUnknownJobNames) {
      throw new SoniqError(
        "SONIQ_UNKNOWN_TASK_NAME",
        `Cannot replay ${row.id}: no job named "${row.jobName}" is defined on this instance, so nothing here could run it. ` +
          "Define the job first, or create the instance with allowUnknownJobNames: true.",
        { context: { id: row.id, name: row.jobName } },
      );
    }
    const options = {
      queue: overrides.queue ?? row.queue,
      priority: overrides.priority ?? row.priority,
      ...(overrides.scheduledAt === null ? {} : { runAt: overrides.scheduledAt }),
    };
    const target = targetOf(row.jobName, this.rt.registry);
    await this.rt.webhooks.refresh();
    const job = await prepareJob(target, row.args, options, this.rt.options, undefined, {
      maxAttempts: row.maxAttempts,
      argsVersion: row.argsVersion,
    });
    // The backend copies the row's name and args (the ones checked here) into the new job.
    const request: BackendReplayRequest = {
      newId,
      queue: job.queue,
      priority: job.priority,
      scheduledAt: job.scheduledAt,
      traceId: row.traceId,
      traceContext: row.traceContext,
      step: row.flowId !== null,
    };
    if (!steps.keep || steps.resolve.length > 0) {
      for (const { name, value } of steps.resolve) {
        const bytes = Buffer.byteLength(JSON.stringify(value), "utf8");
        if (bytes > this.rt.options.maxStepValueBytes) {
          throw new SoniqError(
            "SONIQ_INVALID_ARGUMENT",
            `resolve.${name}: the value is ${bytes} bytes as JSON, more than \`maxStepValueBytes\` (${this.rt.options.maxStepValueBytes}).`,
            { context: { field: `resolve.${name}`, bytes } },
          );
        }
      }
      if (!this.rt.backend.supports("steps")) {
        throw unsupported(this.rt.backend.name, "steps", "deadLetters.replay(id, { steps, resolve })");
      }
      request.steps = steps;
    }
    const deliveries = this.rt.webhooks.rows("job.resurrected", () =>
      resurrectedData(row, newId, this.rt.options.redact),
    );
    if (deliveries.length > 0) request.deliveries = deliveries;
    return request;
  }

  /** Purges every dead letter matching `filter` (chunked; one audit row `dead_letter.purge_where` with the count). */
  async purgeWhere(filter: DeadLetterBulkFilter, options?: BulkOptions): Promise<BulkResult> {
    return bulk(this.rt.backend, "purge_where", filter, options, (row) =>
      this.rt.backend.deadLetters.purge(row.id),
    );
  }

  /**
   * Every matching row as JSON lines (one object per line, dates as ISO strings), newest first, through the
   * app's `redact` (args, result, progress and last error as operators see them).
   * Without `limit` in the filter, all matching rows are exported (paged internally).
   * With a destination, writes the lines to it (respecting back-pressure) and returns the row count;
   * without one, returns the text.
   */
  export(filter?: DeadLetterFilter): Promise<string>;
  export(filter: DeadLetterFilter | undefined, destination: LineSink): Promise<number>;
  async export(filter?: DeadLetterFilter, destination?: LineSink): Promise<string | number> {
    const query = deadLetterListQuery(filter, "deadLetters.export(filter)");
    if (
      destination !== undefined &&
      (typeof destination?.write !== "function" || typeof destination?.once !== "function")
    ) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        "deadLetters.export(filter, destination): the destination must be a Writable (write and once).",
      );
    }
    if (query.position?.direction === "newer") {
      throw invalid(
        "deadLetters.export(filter).before",
        "export walks newest first; start it with after",
        filter?.before,
      );
    }
    // The query caps `limit` at a page; the caller's limit (validated above) bounds the whole export.
    const total = filter?.limit ?? Number.POSITIVE_INFINITY;
    const chunks: string[] = [];
    let count = 0;
    // The first page is the caller's (offset or position); the rest continue after its last row.
    let page = query;
    for (;;) {
      const limit = Math.min(MAX_PAGE_SIZE, total - count);
      if (limit <= 0) break;
      const rows = await this.rt.backend.deadLetters.list({ ...page, limit });
      for (const row of rows) {
        // Shown through `redact`, as every operator view shows a row (the store keeps the truth).
        const line = `${JSON.stringify(this.rt.options.redact.row(row))}\n`;
        if (!destination) chunks.push(line);
        else if (!destination.write(line)) await new Promise<void>((r) => destination.once("drain", r));
      }
      count += rows.length;
      const last = rows[rows.length - 1];
      if (rows.length < limit || last === undefined) break;
      page = { ...query, offset: 0, position: after(last, last.movedToDeadLetterAt) };
    }
    return destination ? count : chunks.join("");
  }
}
