/** Small steps the cases share. Every assertion message says what the contract requires. */
import assert from "node:assert/strict";
import { inspect, isDeepStrictEqual } from "node:util";
import {
  type DeadLetterFilter,
  type DeadLetterSettlement,
  type DoneSettlement,
  deadLetterListQuery,
  isSoniqError,
  type Job,
  jobListQuery,
  type ListJobsFilter,
  type NewJob,
  type QueueStats,
  type RequeueSettlement,
  type Settlement,
  type SoniqErrorCode,
} from "@soniq/core/backend";
import type { CaseContext } from "../types.js";

export async function enqueue(ctx: CaseContext, overrides: Partial<NewJob> = {}): Promise<NewJob> {
  const job = ctx.newJob(overrides);
  const result = await ctx.backend.jobs.enqueue(job, {});
  equal(result.id, job.id, "jobs.enqueue of a new job must return the id core chose");
  equal(result.deduplicated, false, "jobs.enqueue of a new job must report deduplicated: false");
  return job;
}

/** Registers a worker for `queue` (one slot) and returns its id, for claims that stamp a worker. */
export async function registerWorker(ctx: CaseContext, queue: string): Promise<string> {
  const id = ctx.id();
  await ctx.backend.workers.register({
    id,
    hostname: "conformance",
    pid: 1,
    queues: [queue],
    concurrency: 1,
    version: null,
    metadata: null,
  });
  return id;
}

/** Claim exactly one job from `queue`, failing with a clear message otherwise. */
export async function claimOne(
  ctx: CaseContext,
  queue: string,
  workerId: string | null = null,
): Promise<Job> {
  const claimed = (await ctx.backend.runs.claim({ queues: [queue], limit: 1, workerId })).jobs;
  equal(claimed.length, 1, `runs.claim({ queues: ["${queue}"], limit: 1 }) should return one due job`);
  return claimed[0] as Job;
}

/** Claim `n` jobs from a queue holding exactly `n` due jobs. */
export async function claimAll(ctx: CaseContext, queue: string, n: number): Promise<Job[]> {
  const claimed = (await ctx.backend.runs.claim({ queues: [queue], limit: n, workerId: null })).jobs;
  equal(
    claimed.length,
    n,
    `setup: queue ${queue} holds ${n} due jobs, so runs.claim({ queues: ["${queue}"], limit: ${n} }) should return all ${n}`,
  );
  return claimed;
}

/** Enqueue one job and claim it: a processing job and its fencing attempt. */
export async function processingJob(
  ctx: CaseContext,
  overrides: Partial<NewJob> = {},
  workerId: string | null = null,
): Promise<Job> {
  const queue = overrides.queue ?? ctx.queue("p");
  const job = await enqueue(ctx, { ...overrides, queue });
  const claimed = await claimOne(ctx, queue, workerId);
  equal(
    claimed.id,
    job.id,
    `setup: claiming one job from ${queue} should take the job just enqueued (${job.id}), the first due there in claim order`,
  );
  return claimed;
}

/** Cancel a job the case set up, checking `jobs.cancel` applied (a later assertion relies on it). */
export async function cancelForSetup(ctx: CaseContext, id: string, what: string): Promise<void> {
  equal(
    await ctx.backend.jobs.cancel(id),
    true,
    `setup: jobs.cancel of ${what} (${id}) must return true: it was queued or processing, and the case relies on it being cancelled`,
  );
}

type Ref = { id: string; attempts: number };

export function done(job: Ref, result: unknown = null, resultTtlMs = 3_600_000): DoneSettlement {
  return { kind: "done", id: job.id, attempt: job.attempts, result, resultTtlMs };
}

export function requeue(
  job: Ref,
  fields: Partial<Pick<RequeueSettlement, "cause" | "attempts" | "delayMs" | "lastError">> = {},
): RequeueSettlement {
  return {
    kind: "requeue",
    id: job.id,
    attempt: job.attempts,
    cause: "retry",
    attempts: job.attempts,
    delayMs: 0,
    lastError: null,
    ...fields,
  };
}

export function deadLetter(
  job: Ref,
  fields: Partial<Pick<DeadLetterSettlement, "reason" | "error" | "tags">> = {},
): DeadLetterSettlement {
  return {
    kind: "dead_letter",
    id: job.id,
    attempt: job.attempts,
    reason: "permanent_failure",
    error: null,
    tags: null,
    ...fields,
  };
}

/** Settle one item and check it applied. */
export async function settleOne(ctx: CaseContext, item: Settlement, what: string): Promise<void> {
  deepEqual(await ctx.backend.runs.settle([item]), [true], `${what}: runs.settle([${item.kind}]) must apply`);
}

/** A dead-letter row: enqueue, claim and settle the job as dead_letter. Returns the claimed job. */
export async function deadLettered(
  ctx: CaseContext,
  overrides: Partial<NewJob> = {},
  fields: Partial<Pick<DeadLetterSettlement, "reason" | "error" | "tags">> = {},
): Promise<Job> {
  const job = await processingJob(ctx, overrides);
  await settleOne(ctx, deadLetter(job, fields), "moving a processing job to the dead-letter table");
  return job;
}

/** `jobs.list` with the public filter, normalised the way core's app layer does it. */
export function listJobs(ctx: CaseContext, filter: ListJobsFilter = {}): Promise<Job[]> {
  return ctx.backend.jobs.list(jobListQuery(filter));
}

/** `deadLetters.list` with the public filter, normalised the way core's app layer does it. */
export function listDeadLetters(ctx: CaseContext, filter: DeadLetterFilter = {}) {
  return ctx.backend.deadLetters.list(deadLetterListQuery(filter));
}

export function stats(ctx: CaseContext, queue: string | null = null): Promise<QueueStats> {
  return ctx.backend.jobs.stats({ queue });
}

export async function rejectsWith(
  promise: Promise<unknown>,
  code: SoniqErrorCode,
  what: string,
): Promise<unknown> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  assert.ok(error !== undefined, `${what} should reject with ${code}, but it resolved`);
  assert.ok(
    isSoniqError(error, code),
    `${what} should reject with SoniqError ${code}, got ${describeError(error)}`,
  );
  return error;
}

export function describeError(error: unknown): string {
  if (isSoniqError(error)) return `SoniqError ${error.code}: ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export async function statusOf(ctx: CaseContext, id: string): Promise<string | null> {
  return (await ctx.backend.jobs.get(id))?.status ?? null;
}

export function ids(jobs: readonly { id: string }[]): string[] {
  return jobs.map((j) => j.id);
}

export function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** Within `toleranceMs` of `expected`: "about now" checks that tolerate clock skew and slow machines. */
export function near(actual: Date | undefined, expected: number, toleranceMs: number, what: string): void {
  assert.ok(actual instanceof Date && !Number.isNaN(actual.getTime()), `${what} should be a valid Date`);
  const off = Math.abs(actual.getTime() - expected);
  assert.ok(
    off <= toleranceMs,
    `${what} should be within ${toleranceMs} ms of ${new Date(expected).toISOString()}, was ${actual.toISOString()}`,
  );
}

function show(value: unknown): string {
  return inspect(value, { depth: 4, breakLength: Number.POSITIVE_INFINITY });
}

function fail(what: string, actual: unknown, expected: unknown): never {
  const error = new Error(`${what}\n  expected: ${show(expected)}\n  actual:   ${show(actual)}`);
  error.name = "AssertionError";
  throw error;
}

/** Strict equality; the failure says what the contract requires, then both values. */
export function equal<T>(actual: unknown, expected: T, what: string): asserts actual is T {
  if (!Object.is(actual, expected)) fail(what, actual, expected);
}

/** Deep strict equality; the failure says what the contract requires, then both values. */
export function deepEqual<T>(actual: unknown, expected: T, what: string): asserts actual is T {
  if (!isDeepStrictEqual(actual, expected)) fail(what, actual, expected);
}

/** Strict inequality; the failure says what the contract requires and the value. */
export function notEqual(actual: unknown, unexpected: unknown, what: string): void {
  if (Object.is(actual, unexpected)) fail(what, actual, `anything but ${show(unexpected)}`);
}
