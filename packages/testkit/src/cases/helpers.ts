/** Small steps the cases share. Assertion messages say what the contract requires. */
import assert from "node:assert/strict";
import { inspect, isDeepStrictEqual } from "node:util";
import { isSoniqError, type Job, type NewJob, type SoniqErrorCode } from "@soniq/core";
import type { CaseContext } from "../types.js";

export async function enqueue(ctx: CaseContext, overrides: Partial<NewJob> = {}): Promise<NewJob> {
  const job = ctx.newJob(overrides);
  const result = await ctx.backend.enqueue(job);
  equal(result.id, job.id, "enqueue of a new job must return the id core chose");
  equal(result.deduplicated, false, "enqueue of a new job must report deduplicated: false");
  return job;
}

/** Claim exactly one job from `queue`, failing with a clear message otherwise. */
export async function claimOne(
  ctx: CaseContext,
  queue: string,
  workerId: string | null = null,
): Promise<Job> {
  const claimed = await ctx.backend.claim({ queues: [queue], limit: 1, workerId });
  equal(claimed.length, 1, `claim({ queues: ["${queue}"], limit: 1 }) should return one due job`);
  return claimed[0] as Job;
}

/** Enqueue one job and claim it: a processing job and its fencing attempt. */
export async function processingJob(ctx: CaseContext, overrides: Partial<NewJob> = {}): Promise<Job> {
  const queue = overrides.queue ?? ctx.queue("p");
  const job = await enqueue(ctx, { ...overrides, queue });
  const claimed = await claimOne(ctx, queue);
  equal(claimed.id, job.id, "the only queued job of a fresh queue should be the one claimed");
  return claimed;
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
  return (await ctx.backend.getJob(id))?.status ?? null;
}

export function ids(jobs: readonly { id: string }[]): string[] {
  return jobs.map((j) => j.id);
}

/** Milliseconds between two instants, for "about now" checks that tolerate clock skew and slow machines. */
export function near(actual: Date, expected: number, toleranceMs: number, what: string): void {
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

function fail(what: string | undefined, actual: unknown, expected: unknown): never {
  const error = new Error(
    `${what ?? "values differ"}\n  expected: ${show(expected)}\n  actual:   ${show(actual)}`,
  );
  error.name = "AssertionError";
  throw error;
}

/** Strict equality whose failure message says what was expected, then both values. */
export function equal<T>(actual: unknown, expected: T, what?: string): asserts actual is T {
  if (!Object.is(actual, expected)) fail(what, actual, expected);
}

/** Deep strict equality whose failure message says what was expected, then both values. */
export function deepEqual<T>(actual: unknown, expected: T, what?: string): asserts actual is T {
  if (!isDeepStrictEqual(actual, expected)) fail(what, actual, expected);
}
