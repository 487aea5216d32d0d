/**
 * Durable steps (DESIGN.md section 19) as the pages and the API use them: a job's or dead letter's checkpoints
 * (`soniq.jobs.steps`), a signal sent to a job (`soniq.jobs.signal`) and the step options of a single replay
 * (`soniq.deadLetters.replay(id, { steps, resolve })`). Core checks names, payloads and values; its typed errors
 * answer 400, 404 or 409 (errors.ts). A backend without the `steps` capability has no checkpoints to show
 * (`null`), and a write that needs them is a 409 that says so.
 */

import { isSoniqError, type JobStep, type SignalSent, type Soniq } from "@soniq/core";
import { actorOf, type Principal } from "../auth.js";
import { badRequest, DashboardError } from "../errors.js";

/** A job's (or dead letter's) checkpoints in the order they were first written; null when the backend keeps none. */
export async function readSteps(soniq: Soniq, id: string): Promise<JobStep[] | null> {
  try {
    return await soniq.jobs.steps(id);
  } catch (err) {
    if (isSoniqError(err, "SONIQ_UNSUPPORTED")) return null;
    throw err;
  }
}

/** Core's `SONIQ_UNSUPPORTED` (a backend without steps) as a 409 naming it; anything else unchanged. */
function unsupportedAsConflict(err: unknown): unknown {
  return isSoniqError(err, "SONIQ_UNSUPPORTED")
    ? new DashboardError("conflict", err.message, { soniqCode: err.code })
    : err;
}

/** `POST /api/jobs/:id/signal`'s body: `{ name, payload?, key? }` (the keys are checked by security/body.ts). */
export interface SignalBody {
  name: string;
  payload: unknown;
  key?: string;
}

export function parseSignalBody(body: Record<string, unknown>): SignalBody {
  if (typeof body.name !== "string" || body.name === "") {
    throw badRequest('name is required: the signal name the job waits for, e.g. "approval"');
  }
  if (body.key !== undefined && typeof body.key !== "string") throw badRequest("key must be a string");
  return {
    name: body.name,
    payload: body.payload === undefined ? null : body.payload,
    ...(body.key === undefined ? {} : { key: body.key }),
  };
}

/** What the signal route answers: core's outcome, with the job and the name it went to. */
export interface SignalAnswer extends SignalSent {
  jobId: string;
  name: string;
}

/** Sends the signal as the viewer (`dashboard:<label>`, audited `job.signal` by core). */
export async function sendSignal(
  soniq: Soniq,
  principal: Principal,
  id: string,
  signal: SignalBody,
): Promise<SignalAnswer> {
  try {
    const sent = await soniq.jobs.signal(id, signal.name, signal.payload, {
      ...actorOf(principal),
      ...(signal.key === undefined ? {} : { key: signal.key }),
    });
    return { jobId: id, name: signal.name, ...sent };
  } catch (err) {
    throw unsupportedAsConflict(err);
  }
}

/** A single replay's step options, from `POST /api/dead-letters/:id/replay`'s body `{ steps?, resolve? }`. */
export interface ReplayStepOptions {
  steps?: "keep" | "discard";
  resolve?: Record<string, unknown>;
}

export function parseReplayBody(body: Record<string, unknown>): ReplayStepOptions {
  const { steps, resolve } = body;
  if (steps !== undefined && steps !== "keep" && steps !== "discard") {
    throw badRequest('steps must be "keep" (resume at the step that failed) or "discard" (start clean)');
  }
  if (resolve !== undefined && (typeof resolve !== "object" || resolve === null || Array.isArray(resolve))) {
    throw badRequest(
      'resolve must be an object of step names to values, e.g. { "charge_card": { "paymentId": "p1" } }',
    );
  }
  return {
    ...(steps === undefined ? {} : { steps }),
    ...(resolve === undefined ? {} : { resolve: resolve as Record<string, unknown> }),
  };
}

/** Replays dead letter `id` as the viewer with the step options; the new job's id, null when it is gone. */
export async function replayDeadLetter(
  soniq: Soniq,
  principal: Principal,
  id: string,
  options: ReplayStepOptions,
): Promise<string | null> {
  try {
    return await soniq.deadLetters.replay(id, { ...actorOf(principal), ...options });
  } catch (err) {
    throw unsupportedAsConflict(err);
  }
}
