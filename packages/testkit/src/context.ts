/** Builds what a case body receives: the guarded backend, the inspector, unique names, defers. */
import { randomUUID } from "node:crypto";
import type { CompleteBackend, GuardedBackend } from "@soniq/core/backend";
import { guardBackend, unwrapBackend } from "@soniq/core/backend";
import { newJob, uniqueQueue } from "./new-job.js";
import type { BackendHarness, BackendInspector, CaseContext } from "./types.js";

const INSPECTOR_METHODS = [
  "readJob",
  "readDeadLetterJob",
  "writeJobStatus",
  "backdateWorkerHeartbeat",
] as const satisfies readonly (keyof BackendInspector)[];

export function createCaseContext(
  caseId: string,
  backend: GuardedBackend<unknown>,
  harness: BackendHarness,
  deferred: (() => unknown)[],
): CaseContext {
  const slug = caseId.replace(/[^a-z0-9]+/gi, "_").slice(0, 40);
  const queue = (label = "q") => uniqueQueue(`t_${slug}_${label}`);
  const defaultQueue = queue();
  return {
    backend,
    rawBackend: unwrapBackend(harness.backend) as CompleteBackend<unknown>,
    inspector: requiredInspector(harness.inspector),
    harness,
    queue,
    id: () => randomUUID(),
    newJob: (overrides = {}) => newJob({ queue: defaultQueue, ...overrides }),
    defer: (fn) => {
      deferred.push(fn);
    },
    openPeer: async () => {
      if (typeof harness.openPeer !== "function") throw new Error("The harness provides no openPeer().");
      const peer = guardBackend(await harness.openPeer());
      // Deferred functions run in reverse, so the peer closes after anything the case deferred later.
      deferred.push(() => peer.close());
      await peer.migrations.apply();
      return peer;
    },
  };
}

/** Every inspector method present; a missing one throws (cases declare needs, so this means a kit bug). */
function requiredInspector(inspector: BackendInspector | undefined): Required<BackendInspector> {
  const out: Record<string, unknown> = {};
  for (const method of INSPECTOR_METHODS) {
    const fn = inspector?.[method];
    out[method] =
      typeof fn === "function"
        ? fn.bind(inspector)
        : () => Promise.reject(new Error(`The harness provides no inspector.${method}().`));
  }
  return out as unknown as Required<BackendInspector>;
}
