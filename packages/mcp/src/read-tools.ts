/**
 * The read tools of `soniq mcp`: what `soniq status`, `jobs`, `dead-letter`, `schedules` and `audit` show,
 * as JSON, through the app's `redact` (args, results, progress, error texts, and durable steps' values).
 */
import { AUDIT_ACTIONS, type DeadLetterBulkFilter, FLOW_STATES, JOB_STATUSES, type Soniq } from "@soniq/core";
import {
  MAX_FILTER_IDS,
  type SearchableFilter,
  searchFilter,
  shownExplanationOf,
  shownRows,
  shownSchedule,
} from "@soniq/core/ops";
import * as z from "zod";
import { stepsOf, withSteps } from "./steps.js";
import { id, limit, ToolRefusal, type ToolSpec, tool, when } from "./tool.js";

/**
 * Core's text search (`q`): rows whose id, job name or last error contain it, ignoring case. While the app's
 * `redact` is active, an id or a job name exactly (core's `searchFilter`): the raw last error is never searched.
 */
const q = z
  .string()
  .min(1)
  .optional()
  .describe(
    "only rows whose id, job name or last error contain this text (any case); while redact is active, " +
      "only the row with this id or the rows of this exact job name",
  );

/** Core's id set (`ids`): at most `MAX_FILTER_IDS` ids. */
const ids = z
  .array(z.string())
  .max(MAX_FILTER_IDS)
  .optional()
  .describe(`only rows with these ids (at most ${MAX_FILTER_IDS})`);

/** The filters of `dead_letters`, shared by `replay_where` and `purge_where`. */
export const deadLetterFilter = {
  queue: z.string().min(1).optional().describe("only this queue"),
  name: z.string().min(1).optional().describe("only this job name"),
  reason: z.string().min(1).optional().describe("only this dead-letter reason (e.g. max_retries_exceeded)"),
  since: when.optional().describe("moved to the dead letters at or after (ISO date or 2h, 7d ago)"),
  until: when.optional().describe("moved to the dead letters before (ISO date or 2h, 7d ago)"),
  q,
  ids,
};

/** What `deadLetterFilter`'s input selects, as core's dead-letter filter fields (without the search). */
export interface DeadLetterFilterInput {
  queue?: string | undefined;
  name?: string | undefined;
  reason?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  ids?: string[] | undefined;
}

export function deadLetterFields(f: DeadLetterFilterInput): DeadLetterBulkFilter {
  return { queue: f.queue, jobName: f.name, reason: f.reason, since: f.since, until: f.until, ids: f.ids };
}

/** `filter` with the tool's search `q` as the app's `redact` allows it (core's `searchFilter`). */
export function searched<F extends object>(
  soniq: Soniq,
  filter: F & SearchableFilter,
  q: string | undefined,
): F & SearchableFilter {
  return searchFilter(filter, q, soniq.options.redact.active);
}

export const READ_TOOLS: readonly ToolSpec[] = [
  tool({
    name: "stats",
    description:
      "Job counts by status (queued, processing, done, dead_letter, cancelled, total), optionally for one queue.",
    input: z.strictObject({ queue: z.string().min(1).optional().describe("only this queue") }),
    write: false,
    run: (input, { soniq }) =>
      soniq.jobs.stats(input.queue === undefined ? undefined : { queue: input.queue }),
  }),
  tool({
    name: "queues",
    description:
      "Every queue with jobs, dead letters or settings: paused, concurrency, groupConcurrency, rateLimit, " +
      "stats, and lagMs (the age of the oldest ready job; null when nothing is ready).",
    input: z.strictObject({}),
    write: false,
    run: (_input, { soniq }) => soniq.queues.list(),
  }),
  tool({
    name: "jobs",
    description:
      "Jobs, newest first, filtered by status, queue, job name, text (q) and ids (dead letters: see dead_letters).",
    input: z.strictObject({
      status: z
        .union([z.enum(JOB_STATUSES), z.array(z.enum(JOB_STATUSES)).min(1)])
        .optional()
        .describe(`one status or a list: ${JOB_STATUSES.join(", ")}`),
      queue: z.string().min(1).optional().describe("only this queue"),
      name: z.string().min(1).optional().describe("only this job name"),
      q,
      ids,
      limit: limit(50),
    }),
    write: false,
    // Each last error also scrubbed of what redact hid of the job's steps (core's shownRows).
    run: async (input, { soniq }) =>
      shownRows(
        soniq,
        await soniq.jobs.list(
          searched(
            soniq,
            {
              status: input.status,
              queue: input.queue,
              jobName: input.name,
              ids: input.ids,
              limit: input.limit,
            },
            input.q,
          ),
        ),
      ),
  }),
  tool({
    name: "job",
    description:
      "One job by id: args and their version (argsVersion: the job definition's version when it was enqueued; " +
      "null: unversioned, taken as current), result, last error, attempts, timings, and its durable steps in the order they were " +
      "first written: steps: [{ name, kind (step, sleep, signal), state (done, failed, waiting, timed_out), value, " +
      "error, attempt (0: resolved by an operator at replay), startedAt, finishedAt, wakeAt }].",
    input: z.strictObject({ id: id("the job id") }),
    write: false,
    run: async (input, { soniq }) => {
      const job = await soniq.jobs.get(input.id);
      if (!job)
        throw new ToolRefusal(`no job with id ${input.id}. If it was dead-lettered, try dead_letter.`);
      return withSteps(soniq.options.redact, job, await stepsOf(soniq, job.id));
    },
  }),
  tool({
    name: "explain",
    description:
      "Why a job is (not) running: { status, verdict, reasons: [{ code, message, evidence }] } naming every " +
      "cause that applies (queue_paused, retry_backoff, no_worker_for_queue, waiting_behind, ...).",
    input: z.strictObject({ id: id("a job or dead-letter id") }),
    write: false,
    // Explain's evidence quotes last errors (a held step's: its parent's): each redacted as its own row's.
    run: (input, { soniq }) => shownExplanationOf(soniq, input.id),
  }),
  tool({
    name: "dead_letters",
    description:
      "Dead-lettered jobs, newest first, filtered by queue, job name, reason, when they were moved, text (q) and ids.",
    input: z.strictObject({ ...deadLetterFilter, limit: limit(50) }),
    write: false,
    run: async (input, { soniq }) =>
      shownRows(
        soniq,
        await soniq.deadLetters.list(
          searched(soniq, { ...deadLetterFields(input), limit: input.limit }, input.q),
        ),
      ),
  }),
  tool({
    name: "dead_letter",
    description:
      "One dead-lettered job by id: args and their version (argsVersion, kept by a replay; null: unversioned), " +
      "last error, reason, attempts, replays, and the durable steps it kept " +
      "for its replay (as job answers them; a failed step can be resolved by name with replay's resolve).",
    input: z.strictObject({ id: id("the dead-letter id (the job's id)") }),
    write: false,
    run: async (input, { soniq }) => {
      const row = await soniq.deadLetters.get(input.id);
      if (!row) throw new ToolRefusal(`no dead-letter job with id ${input.id}. List them with dead_letters.`);
      return withSteps(soniq.options.redact, row, await stepsOf(soniq, row.id));
    },
  }),
  tool({
    name: "schedules",
    description: "Recurring schedules: name, job, cron or interval, next and last run, paused.",
    input: z.strictObject({}),
    write: false,
    run: async (_input, { soniq }) =>
      (await soniq.schedules.list()).map((s) => shownSchedule(soniq.options.redact, s)),
  }),
  tool({
    name: "schedule_history",
    description: "A schedule's tick ledger, newest first: { tickAt, outcome, jobId, reason, recordedAt }.",
    input: z.strictObject({
      name: z.string().min(1).describe("the schedule name"),
      limit: limit(20),
    }),
    write: false,
    run: async (input, { soniq }) => {
      if (!(await soniq.schedules.get(input.name)))
        throw new ToolRefusal(`no schedule named ${input.name}. List them with schedules.`);
      return soniq.schedules.history(input.name, { limit: input.limit });
    },
  }),
  tool({
    name: "flows",
    description:
      "Workflows (job dependencies), newest first: { id, name, state, counts, createdBy, createdAt, finishedAt }. " +
      "A held flow waits on a dead-lettered parent: replay or purge it.",
    input: z.strictObject({
      state: z
        .enum(FLOW_STATES)
        .optional()
        .describe(`only this state: ${FLOW_STATES.join(", ")}`),
      name: z.string().min(1).optional().describe("only flows started with this name"),
      limit: limit(50),
    }),
    write: false,
    run: (input, { soniq }) => soniq.flows.list({ state: input.state, name: input.name, limit: input.limit }),
  }),
  tool({
    name: "flow",
    description:
      "One workflow by id with its steps: { ref, jobId, jobIds, jobName, state, dependsOn, onParentFailure, " +
      "pendingParents, reason }. Look a step's job up with job, explain or dead_letter.",
    input: z.strictObject({ id: id("the flow id") }),
    write: false,
    run: async (input, { soniq }) => {
      const flow = await soniq.flows.get(input.id);
      if (!flow) throw new ToolRefusal(`no flow with id ${input.id}. List them with flows.`);
      return flow;
    },
  }),
  tool({
    name: "audit",
    description:
      "The audit log of operator actions (replay, purge, cancel, pause, ...), newest first: " +
      "{ id, at, actor, action, target, params, outcome, details }. This server's writes have actor mcp:<client>.",
    input: z.strictObject({
      limit: limit(50),
      action: z.enum(AUDIT_ACTIONS).optional().describe("only this action"),
      since: when.optional().describe("at or after (ISO date or 2h, 7d ago)"),
    }),
    write: false,
    run: (input, { soniq }) =>
      soniq.audit.list({ limit: input.limit, action: input.action, since: input.since }),
  }),
];
