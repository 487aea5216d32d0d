/**
 * The memory backend's `FlowStore` (core's flow-engine.ts runs its programs over it): the flow and step
 * maps of the store, copied on every read and write so a program's changes land only when it saves them.
 */
import type { FlowProgram, FlowStore, NewJob, StoredFlow, StoredStep } from "@soniq/core/backend";
import { runFlowSync } from "@soniq/core/backend";
import { toRecord } from "./enqueue.js";
import type { MemoryStore } from "./store.js";

const copy = <T>(value: T): T => structuredClone(value);
/**
 * A step's copy: the arrays the engine changes are copied, `dependsOn` (never changed after the insert, and
 * up to 10,000 refs long) and the prepared job (replaced, never mutated) are shared, so a parent's release
 * costs the same whatever its dependent's fan-in.
 */
const copyStep = (step: StoredStep): StoredStep => ({
  ...step,
  jobIds: [...step.jobIds],
  dependents: [...step.dependents],
});

export function memoryFlowStore(store: MemoryStore): FlowStore {
  const stepsOf = (flowId: string) => {
    let steps = store.flowSteps.get(flowId);
    if (steps === undefined) {
      steps = new Map();
      store.flowSteps.set(flowId, steps);
    }
    return steps;
  };
  return {
    flow: (id) => {
      const flow = store.flows.get(id);
      return flow === undefined ? null : copy(flow);
    },
    steps: (flowId, refs) => {
      const steps = store.flowSteps.get(flowId);
      return refs.flatMap((ref) => {
        const step = steps?.get(ref);
        return step === undefined ? [] : [copyStep(step)];
      });
    },
    allSteps: (flowId) => [...(store.flowSteps.get(flowId)?.values() ?? [])].map(copyStep),
    insertFlow: (flow: StoredFlow) => {
      store.flows.set(flow.id, copy(flow));
    },
    saveFlow: (flow: StoredFlow) => {
      store.flows.set(flow.id, copy(flow));
      if (flow.finishedAt === null) store.flowsNotified.delete(flow.id);
    },
    insertSteps: (flowId, steps) => saveSteps(store, stepsOf(flowId), flowId, steps),
    saveSteps: (flowId, steps) => saveSteps(store, stepsOf(flowId), flowId, steps),
    saveStepStates: (flowId, steps) => {
      const into = stepsOf(flowId);
      for (const step of steps) {
        const stored = into.get(step.ref);
        if (stored === undefined) continue;
        const { state, pendingParents, reason, finishedAt } = step;
        into.set(step.ref, { ...stored, state, pendingParents, reason, finishedAt });
      }
    },
    insertJobs: (jobs: readonly NewJob[]) => {
      const now = store.now();
      for (const job of jobs) {
        store.insertJob(toRecord(store, job, now), now);
        store.wake(job.queue);
      }
    },
    cancelJobs: (ids) =>
      ids.filter((id) => {
        const job = store.jobs.get(id);
        if (job === undefined || (job.status !== "queued" && job.status !== "processing")) return false;
        store.transition(job, "cancelled", {}, store.now());
        return true;
      }),
  };
}

function saveSteps(
  store: MemoryStore,
  into: Map<string, StoredStep>,
  flowId: string,
  steps: readonly StoredStep[],
): void {
  for (const step of steps) {
    const before = into.get(step.ref);
    if (before !== undefined && before.jobId !== step.jobId) store.stepsByJob.delete(before.jobId);
    into.set(step.ref, copyStep(step));
    store.stepsByJob.set(step.jobId, { flowId, ref: step.ref });
  }
}

/** Runs a flow program in one synchronous step (nothing else runs in between, as in a transaction). */
export function runFlow<T>(store: MemoryStore, program: FlowProgram<T>): T {
  return runFlowSync(program, memoryFlowStore(store));
}
