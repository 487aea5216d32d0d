/** The flows facet: start, read, list and cancel workflows (core's flow-engine.ts decides every change). */
import {
  cancelFlow,
  type Flow,
  type FlowListQuery,
  type FlowSummary,
  type FlowsFacet,
  type NewWebhookDelivery,
  type ParentOutcome,
  parentOutcome,
  startFlow,
  toFlowStep,
  toFlowSummary,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { transactionUnsupported } from "./internal/errors.js";
import { runFlow } from "./internal/flow-store.js";
import { decodeJson } from "./internal/rows.js";
import type { MemoryStore } from "./internal/store.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function flowsFacet(store: MemoryStore): FlowsFacet<never> {
  return {
    start: async (flow, options) => {
      if (options?.tx !== undefined) throw transactionUnsupported();
      runFlow(store, startFlow(flow, flow.createdBy, new Date(store.now())));
    },
    get: async (id) => get(store, id),
    list: async (query) => list(store, query),
    cancel: async (id, audit) => {
      const cancelled = runFlow(store, cancelFlow(id, new Date(store.now())));
      if (cancelled === null) return { cancelled: false, cancelledJobIds: [] };
      if (audit) writeAudit(store, audit);
      // The cancelled jobs finished: waiters hear them, as after jobs.cancel.
      store.finished(cancelled);
      return { cancelled: true, cancelledJobIds: cancelled };
    },
    stepOfJob: async (jobId) => {
      const at = store.stepsByJob.get(jobId);
      const flow = at === undefined ? undefined : store.flows.get(at.flowId);
      const step = at === undefined ? undefined : store.flowSteps.get(at.flowId)?.get(at.ref);
      if (at === undefined || flow === undefined || step === undefined) return null;
      const status = store.jobs.get(step.jobId)?.status ?? null;
      return { flowId: at.flowId, flowState: flow.state, step: toFlowStep(step, status) };
    },
    parents: async (flowId, ref) => parents(store, flowId, ref),
    notifyFinished: async (limit, deliveries) => notifyFinished(store, limit, deliveries),
  };
}

/** The `flow.finished` outbox: the flows marked and their deliveries written in one synchronous step. */
function notifyFinished(
  store: MemoryStore,
  limit: number,
  deliveries: (flows: readonly FlowSummary[]) => readonly NewWebhookDelivery[],
): number {
  const taken = [...store.flows.values()]
    .filter((f) => f.finishedAt !== null && !store.flowsNotified.has(f.id))
    .sort((a, b) => Number(a.finishedAt) - Number(b.finishedAt) || (a.id < b.id ? -1 : 1))
    .slice(0, limit);
  if (taken.length === 0) return 0;
  const rows = deliveries(structuredClone(taken.map(toFlowSummary)));
  const now = store.now();
  for (const flow of taken) store.flowsNotified.set(flow.id, now);
  writeDeliveries(store, rows);
  return taken.length;
}

function get(store: MemoryStore, id: string): Flow | null {
  const flow = store.flows.get(id);
  if (flow === undefined) return null;
  const steps = [...(store.flowSteps.get(id)?.values() ?? [])].map((step) =>
    toFlowStep(step, store.jobs.get(step.jobId)?.status ?? null),
  );
  return structuredClone({ ...toFlowSummary(flow), steps });
}

function list(store: MemoryStore, query: FlowListQuery): FlowSummary[] {
  const rows = [...store.flows.values()].filter(
    (f) =>
      (query.state === null || f.state === query.state) &&
      (query.name === null || f.name === query.name) &&
      (query.before === null || f.id < query.before),
  );
  rows.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return rows.slice(0, query.limit).map((f) => structuredClone(toFlowSummary(f)));
}

function parents(store: MemoryStore, flowId: string, ref: string): Record<string, ParentOutcome> {
  const steps = store.flowSteps.get(flowId);
  const step = steps?.get(ref);
  const out: Record<string, ParentOutcome> = {};
  for (const parentRef of step?.dependsOn ?? []) {
    const parent = steps?.get(parentRef);
    if (parent === undefined) continue;
    const job = store.jobs.get(parent.jobId);
    const dead = store.deadLetters.get(parent.jobId);
    const outcome = parentOutcome(
      parent.state,
      job === undefined ? null : { result: decodeJson(job.resultJson) },
      dead === undefined ? null : dead,
    );
    if (outcome !== null) out[parentRef] = outcome;
  }
  return out;
}
