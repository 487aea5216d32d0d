/**
 * The steps facet (capability `steps`, DESIGN.md section 19): a job's checkpoints and its signal mailbox
 * (internal/step-rows.ts), each call in one synchronous step, so nothing else runs in between.
 *
 * Every write made for a run is fenced like a settle: the job is `processing` under the claim's attempt and,
 * when the ref names one, its worker. The memory backend has no transactions (its tx type is `never`): the
 * `InTransaction` calls run `fn` without a handle, await it, then check the fence and write in one synchronous
 * step, so nothing is stored when `fn` throws, and a run that lost the job while `fn` ran stores nothing.
 * `completeInTransaction` applies its `done` through the runs facet's `settle` (passed in by backend.ts), the
 * one code path of a completion. The wait and signal rules are core's programs (`runWaitSync`, `runSignalSync`)
 * over the small stores built here.
 */
import {
  type AuditRecord,
  type DoneSettlement,
  occurrenceBase,
  type RunsFacet,
  runSignalSync,
  runWaitSync,
  type SignalRequest,
  type SignalResult,
  type SignalStore,
  type StepRef,
  type StepsFacet,
  type StepWrite,
  type WaitRequest,
  type WaitResult,
  type WaitStore,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { decodeJson, type JobRecord } from "./internal/rows.js";
import {
  encodeValue,
  listSteps,
  putStep,
  readStep,
  type StepFields,
  signalBox,
  stepFields,
} from "./internal/step-rows.js";
import type { MemoryStore } from "./internal/store.js";

export function stepsFacet(store: MemoryStore, settle: RunsFacet["settle"]): StepsFacet<never> {
  return {
    list: async (jobId) => listSteps(store, jobId),
    save: async (ref, write) => save(store, ref, write),
    saveInTransaction: async (ref, fn, write) => {
      const value = await fn(undefined as never);
      // From here to the write, one synchronous step: the fence is checked when the checkpoint is written.
      return { applied: save(store, ref, write(value)), value };
    },
    completeInTransaction: async (ref, fn, done) => {
      const value = await fn(undefined as never);
      const item: DoneSettlement = { ...done(value), id: ref.id, attempt: ref.attempt };
      // The runs facet's settle runs synchronously when called (its promise only carries the answer).
      const [applied] = await settle([item], ref.workerId ?? undefined);
      return { applied: applied === true, value };
    },
    wait: async (ref, request, inProcessMs) => wait(store, ref, request, inProcessMs),
    signal: async (request, audit) => signal(store, request, audit),
  };
}

/** The job while the ref's run holds it (processing, its attempt, its worker when named). */
function fenced(store: MemoryStore, ref: StepRef): JobRecord | undefined {
  return store.processingAt(ref.id, ref.attempt, ref.workerId ?? undefined);
}

/** A `step` checkpoint, encoded first, written only while the fence holds. */
function save(store: MemoryStore, ref: StepRef, write: StepWrite): boolean {
  const now = store.now();
  const fields: StepFields = {
    name: write.name,
    kind: "step",
    state: write.state,
    valueJson: encodeValue(write.value, `step value (job ${ref.id}, ${write.name})`),
    error: write.error,
    attempt: ref.attempt,
    startedAt: write.startedAt.getTime(),
    finishedAt: now,
    wakeAt: null,
  };
  if (fenced(store, ref) === undefined) return false;
  putStep(store, ref.id, fields);
  return true;
}

function wait(store: MemoryStore, ref: StepRef, request: WaitRequest, inProcessMs: number): WaitResult {
  const now = store.now();
  const waits: WaitStore = {
    hold: (held) => (fenced(store, held) === undefined ? null : new Date(now)),
    readStep: (jobId, name) => readStep(store, jobId, name),
    writeStep: (jobId, step) => putStep(store, jobId, stepFields(jobId, step)),
    takeSignal: (jobId, name, consumedBy, at) => {
      const signal = store.jobSignals
        .get(jobId)
        ?.signals.find((s) => s.consumedAt === null && s.name === name);
      if (signal === undefined) return null;
      signal.consumedAt = at.getTime();
      signal.consumedBy = consumedBy;
      return { payload: decodeJson(signal.payloadJson) };
    },
    suspend: (jobId, wakeAt, attempts) => {
      const job = store.jobs.get(jobId);
      if (job === undefined) return;
      // Through the status write, so the lane, the worker index and the counters follow.
      store.transition(job, "queued", { attempts, workerId: null, scheduledAt: wakeAt.getTime() }, now);
    },
  };
  return runWaitSync(waits, ref, request, inProcessMs);
}

function signal(store: MemoryStore, request: SignalRequest, audit: AuditRecord | undefined): SignalResult {
  const now = store.now();
  const payloadJson = encodeValue(request.payload, "signal payload");
  let woken: string | null = null;
  const signals: SignalStore = {
    lockTarget: (jobId) =>
      store.jobs.get(jobId)?.status ?? (store.deadLetters.has(jobId) ? "dead_letter" : null),
    insertSignal: (r) => {
      if (r.key !== null && store.jobSignals.get(r.jobId)?.keys.has(r.key) === true) return false;
      const box = signalBox(store, r.jobId);
      box.signals.push({
        id: r.id,
        name: r.name,
        payloadJson,
        key: r.key,
        createdAt: now,
        consumedAt: null,
        consumedBy: null,
      });
      if (r.key !== null) box.keys.add(r.key);
      return true;
    },
    waitingFor: (jobId, name) => {
      const steps = store.jobSteps.get(jobId);
      if (steps === undefined) return false;
      for (const step of steps.byName.values()) {
        if (step.kind === "signal" && step.state === "waiting" && occurrenceBase(step.name) === name)
          return true;
      }
      return false;
    },
    wake: (jobId) => {
      const job = store.jobs.get(jobId);
      if (job === undefined || job.status !== "queued") return;
      // queued -> queued through the status write: the lane takes it again, due now (its old entry goes stale).
      store.transition(job, "queued", { scheduledAt: now }, now);
      woken = job.queue;
    },
    audit: (record) => writeAudit(store, record, now),
  };
  const result = runSignalSync(signals, request, audit);
  if (woken !== null) store.wake(woken);
  return result;
}
