/**
 * memoryBackend(): the whole Backend contract in process, with the semantics of the SQL backends.
 * Each facet is built by the file named after it; this file only wires them to one store.
 */
import type { BackendCapabilities, CompleteBackend, RunsFacet } from "@soniq/core/backend";
import { auditFacet } from "./audit.js";
import { deadLettersFacet } from "./dead-letters.js";
import { flowsFacet } from "./flows.js";
import { MemoryStore, STORE } from "./internal/store.js";
import { jobsFacet } from "./jobs.js";
import { leasesFacet } from "./leases.js";
import { metricsFacet } from "./metrics.js";
import { migrationsFacet } from "./migrations.js";
import { type MemoryBackendOptions, resolveOptions } from "./options.js";
import { queuesFacet } from "./queues.js";
import { runsFacet } from "./runs.js";
import { schedulesFacet } from "./schedules.js";
import { stepsFacet } from "./steps.js";
import { versionsFacet } from "./versions.js";
import { wakeUpsFacet } from "./wake-ups.js";
import { webhooksFacet } from "./webhooks.js";
import { workersFacet } from "./workers.js";

/** The memory backend: no transactions (`tx` is rejected), so its transaction type is `never`. */
export type MemoryBackend = CompleteBackend<never>;

const CAPABILITIES: BackendCapabilities = Object.freeze({
  notify: false,
  transactionalEnqueue: false,
  advisoryLocks: false,
  multiProcess: false,
});

export function memoryBackend(options?: MemoryBackendOptions): MemoryBackend {
  return buildMemoryBackend(options);
}

/** Passes the runs facet through before it is installed (the `/testing` entry's fault hook). */
export type MemoryRunsWrapper = (runs: RunsFacet, store: MemoryStore) => RunsFacet;

/** `memoryBackend()` with its runs facet passed through `wrapRuns`; for `testing.ts`, not exported by index.ts. */
export function buildMemoryBackend(
  options?: MemoryBackendOptions,
  wrapRuns?: MemoryRunsWrapper,
): MemoryBackend {
  const resolved = resolveOptions(options);
  const store = new MemoryStore(resolved.now);
  const runs = runsFacet(store);
  let closing: Promise<void> | undefined;
  const backend: MemoryBackend = {
    name: resolved.name,
    capabilities: CAPABILITIES,
    migrations: migrationsFacet(),
    jobs: jobsFacet(store),
    runs: wrapRuns === undefined ? runs : wrapRuns(runs, store),
    deadLetters: deadLettersFacet(store),
    workers: workersFacet(store),
    leases: leasesFacet(store),
    wakeUps: wakeUpsFacet(store),
    schedules: schedulesFacet(store),
    queues: queuesFacet(store),
    audit: auditFacet(store),
    metrics: metricsFacet(store),
    flows: flowsFacet(store),
    webhooks: webhooksFacet(store),
    steps: stepsFacet(store, runs.settle),
    versions: versionsFacet(store),
    close: () => {
      // Nothing to release but the listeners; the data stays readable through the test inspector.
      closing ??= Promise.resolve().then(() => store.listeners.clear());
      return closing;
    },
  };
  // Not enumerable: a copy of the backend object ({ ...backend }) is not a memory backend.
  Object.defineProperty(backend, STORE, { value: store });
  return backend;
}
