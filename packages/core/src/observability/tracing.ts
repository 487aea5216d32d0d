/**
 * What a tracing plugin (`@soniq/opentelemetry`) needs from core, without core knowing any tracing library:
 * - a producer hook around every write of new jobs (`enqueue`, `enqueueMany`, a dead-letter replay, a
 *   schedule's fire). It is handed the jobs about to be written and a `send(traceContext)` that stamps the
 *   given propagation carrier on them and writes them; it returns when the write settles. The carrier is
 *   stored on the row (`trace_context`, and its trace id in `trace_id`), so any process can continue it.
 * - the run's side: middleware sees `ctx.job.traceContext`; `onOutcome` says how the run ended.
 * With no producer hook registered, `produce` is the write itself: nothing is stored, nothing is allocated.
 */
import type { TraceContext } from "../common/types.js";

/**
 * Why new jobs are being written: a plain enqueue, a dead-letter replay, a schedule's fire, or the steps of a
 * workflow (for the flows engine, whose write goes through `produce` like the others).
 */
export type SendOrigin = "enqueue" | "replay" | "schedule" | "flow";

/** One job of a send, as prepared (its id is final unless the write deduplicates it onto another job). */
export interface SentJob {
  readonly id: string;
  readonly jobName: string;
  readonly queue: string;
}

export interface SendEvent {
  readonly origin: SendOrigin;
  /** The jobs written by this call, in input order (more than one for `enqueueMany`). */
  readonly jobs: readonly SentJob[];
  /** Trace contexts the send relates to without continuing them: a replay's dead letter's. */
  readonly links: readonly TraceContext[];
}

/**
 * Wraps a write of new jobs. Call `send` synchronously (a SQLite `tx` insert must land before the caller's
 * transaction returns), with the carrier to store or null; it resolves or rejects with the write. A hook that
 * throws, or never calls `send`, does not stop the write: the jobs are then written without a trace.
 */
export type ProducerHook = (
  event: SendEvent,
  send: (traceContext: TraceContext | null) => Promise<unknown>,
) => unknown;

/** How a run ended, as `onOutcome` hooks see it (`soniq.job.outcome` in DESIGN.md section 16). */
export type RunOutcomeKind = "done" | "retry" | "snooze" | "dead_letter" | "cancelled" | "lost" | "nack";

export interface RunOutcome {
  readonly outcome: RunOutcomeKind;
  /** From the start of the run to the decision, in ms. */
  readonly durationMs: number;
  /** The stored error text (retry and dead_letter), else null. */
  readonly error: string | null;
  /** For dead_letter: the stored reason. */
  readonly deadLetterReason: string | null;
}

/** What a write stamps: the new row's trace fields. */
export interface Traced {
  traceId: string | null;
  traceContext: TraceContext | null;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
const ZERO_TRACE = "0".repeat(32);
/** Largest carrier stored (JSON characters): a traceparent and a tracestate fit many times over. */
export const MAX_TRACE_CONTEXT_LENGTH = 4096;

/** The trace id of a carrier's W3C `traceparent`, or null when it has none (or an invalid one). */
export function traceIdOf(traceContext: TraceContext | null | undefined): string | null {
  const header = traceContext?.traceparent;
  if (typeof header !== "string") return null;
  const match = TRACEPARENT.exec(header);
  return match?.[1] && match[1] !== ZERO_TRACE ? match[1] : null;
}

/** A carrier worth storing: a valid traceparent, string values only, bounded; anything else stores null. */
function storable(traceContext: unknown): TraceContext | null {
  if (typeof traceContext !== "object" || traceContext === null || Array.isArray(traceContext)) return null;
  const carrier = traceContext as Record<string, unknown>;
  if (!Object.values(carrier).every((v) => typeof v === "string")) return null;
  if (traceIdOf(carrier as TraceContext) === null) return null;
  if (JSON.stringify(carrier).length > MAX_TRACE_CONTEXT_LENGTH) return null;
  return { ...(carrier as TraceContext) };
}

/** Stamps `traceContext` (and its trace id) on every target. */
export function stampTrace(targets: readonly Traced[], traceContext: unknown): void {
  const carrier = storable(traceContext);
  const traceId = traceIdOf(carrier);
  for (const target of targets) {
    target.traceContext = carrier;
    target.traceId = traceId;
  }
}

/**
 * Runs `write` through the producer hooks (the first registered outermost), stamping what they send on
 * `targets` first. No hooks: just `write()`. The result is always the write's own; hook failures are ignored.
 */
export function produce<T>(
  hooks: readonly ProducerHook[],
  event: () => SendEvent,
  targets: readonly Traced[],
  write: () => Promise<T>,
): Promise<T> {
  if (hooks.length === 0) return write();
  let written: Promise<T> | undefined;
  const final = (traceContext: TraceContext | null): Promise<T> => {
    if (!written) {
      stampTrace(targets, traceContext);
      written = write();
    }
    return written;
  };
  const ev = event();
  let chain: (traceContext: TraceContext | null) => Promise<unknown> = final;
  for (let i = hooks.length - 1; i >= 0; i--) {
    const hook = hooks[i] as ProducerHook;
    const next = chain;
    chain = (outer) => {
      let sent: Promise<unknown> | undefined;
      const send = (traceContext: TraceContext | null) => {
        sent ??= next(traceContext ?? outer);
        return sent;
      };
      try {
        const r = hook(ev, send) as Promise<unknown> | undefined;
        if (r && typeof r.then === "function") r.then(undefined, () => {});
      } catch {
        // A tracing hook never stops a write.
      }
      return sent ?? next(outer);
    };
  }
  chain(null).then(undefined, () => {});
  return written ?? final(null);
}
