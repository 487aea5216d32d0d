/**
 * The deadLetters facet: list, read, replay (mint a fresh queued job; the row stays and counts it; its checkpoints
 * and unconsumed signals move as `request.steps` says), purge (the row, its checkpoints and its signals).
 */
import {
  type DeadLetterJob,
  type DeadLetterListQuery,
  type DeadLetterMatch,
  type DeadLettersFacet,
  purgeStep,
  type ReplayRequest,
  replayStep,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { runFlow } from "./internal/flow-store.js";
import { idSet, textSearch } from "./internal/list-filters.js";
import {
  type DeadLetterRecord,
  encodeTrace,
  newestFirst,
  queuedRecord,
  toDeadLetterJob,
} from "./internal/rows.js";
import {
  deleteSteps,
  type EncodedReplaySteps,
  encodeReplaySteps,
  moveForReplay,
} from "./internal/step-rows.js";
import type { MemoryStore } from "./internal/store.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function deadLettersFacet(store: MemoryStore): DeadLettersFacet {
  return {
    list: async (query) => list(store, query),
    count: async (query) => matching(store, query).length,
    get: async (id) => {
      const row = store.deadLetters.get(id);
      return row === undefined ? null : toDeadLetterJob(row);
    },
    replay: async (id, request, audit) => {
      // Encoded before anything is written: a value that cannot be stored leaves the store as it was.
      const steps = encodeReplaySteps(request.steps);
      const newId = replay(store, id, request, steps);
      if (newId !== null) writeDeliveries(store, request.deliveries);
      if (newId !== null && audit) writeAudit(store, audit);
      return newId;
    },
    purge: async (id, audit) => {
      const row = store.deadLetters.get(id);
      if (row === undefined) return false;
      store.removeDeadLetter(row);
      deleteSteps(store, row.id);
      if (row.flowId !== null && row.stepRef !== null) {
        runFlow(store, purgeStep(row.flowId, row.stepRef, row.id, new Date(store.now())));
      }
      if (audit) writeAudit(store, audit);
      return true;
    },
  };
}

function list(store: MemoryStore, query: DeadLetterListQuery): DeadLetterJob[] {
  return newestFirst(matching(store, query), (row) => row.movedToDeadLetterAt, query).map(toDeadLetterJob);
}

function replay(
  store: MemoryStore,
  id: string,
  request: ReplayRequest,
  steps: EncodedReplaySteps,
): string | null {
  const row = store.deadLetters.get(id);
  if (row === undefined) return null;
  const now = store.now();
  const queue = request.queue ?? row.queue;
  // A step's dead letter rejoins its flow: the new job takes the step's place (flow-engine.ts decides).
  const rejoined =
    row.flowId !== null &&
    row.stepRef !== null &&
    runFlow(store, replayStep(row.flowId, row.stepRef, row.id, request.newId, new Date(now)));
  const fields = {
    id: request.newId,
    jobName: row.jobName,
    argsJson: row.argsJson,
    argsHash: null,
    maxAttempts: row.maxAttempts,
    queue,
    priority: request.priority ?? row.priority,
    uniqueJob: false,
    dedupKey: null,
    scheduledAt: request.scheduledAt?.getTime() ?? now,
    producerId: null,
    group: null,
    traceId: request.traceId,
    traceJson: encodeTrace(request.traceContext),
    seq: store.nextSeq(),
    flowId: rejoined ? row.flowId : null,
    stepRef: rejoined ? row.stepRef : null,
    argsVersion: row.argsVersion,
  };
  store.insertJob(queuedRecord(fields, now), now);
  moveForReplay(store, id, request.newId, steps, now);
  row.resurrectionCount++;
  row.lastResurrectionAt = now;
  store.wake(queue);
  return request.newId;
}

function matching(store: MemoryStore, query: DeadLetterMatch): DeadLetterRecord[] {
  const since = query.since?.getTime() ?? null;
  const until = query.until?.getTime() ?? null;
  const ids = idSet(query.ids);
  const search = textSearch(query.q);
  const rows: DeadLetterRecord[] = [];
  for (const row of store.deadLetters.values()) {
    if (query.jobName !== null && row.jobName !== query.jobName) continue;
    if (query.queue !== null && row.queue !== query.queue) continue;
    if (query.reason !== null && row.deadLetterReason !== query.reason) continue;
    if (since !== null && row.movedToDeadLetterAt < since) continue;
    if (until !== null && row.movedToDeadLetterAt >= until) continue;
    if (ids !== null && !ids.has(row.id)) continue;
    if (search !== null && !search(row)) continue;
    rows.push(row);
  }
  return rows;
}
