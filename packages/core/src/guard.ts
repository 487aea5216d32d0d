/**
 * Core's wrapper around any backend, so third-party backends get the lifecycle guarantees for free:
 * - `migrate()` runs once at a time; a successful run is remembered (later calls resolve with its report
 *   and `appliedNow: []`, since they applied nothing), a failed one may be retried.
 * - after `close()` starts, every call rejects with `SONIQ_CLOSED`.
 * - `close()` is memoised: every call returns the same promise.
 */
import type { Backend } from "./backend.js";
import { SoniqError } from "./errors.js";

/** Every async method of the contract, so the guard (and the testkit) can check a backend is complete. */
export const BACKEND_METHODS = [
  "migrate",
  "migrationStatus",
  "enqueue",
  "enqueueMany",
  "claim",
  "complete",
  "retry",
  "nack",
  "reschedule",
  "markJobDeadLetter",
  "cancel",
  "getJob",
  "listJobs",
  "getQueueStats",
  "listDeadLetterJobs",
  "getDeadLetterJob",
  "replayDeadLetterJob",
  "purgeDeadLetterJob",
  "registerWorker",
  "heartbeat",
  "stopWorker",
  "listWorkers",
  "recoverStaleWorkers",
  "deleteExpiredJobs",
  "registerTaskNames",
  "listTaskNames",
  "subscribe",
  "tryAcquireLease",
  "releaseLease",
  "close",
] as const satisfies readonly (keyof Backend<unknown>)[];

/** Optional methods of the contract: forwarded (and guarded) when the backend has them. */
export const OPTIONAL_BACKEND_METHODS = [
  "markJobsDeadLetter",
] as const satisfies readonly (keyof Backend<unknown>)[];

const GUARDED = Symbol.for("soniq.guardedBackend");

type AnyFn = (...args: unknown[]) => Promise<unknown>;

export function guardBackend<TTx>(backend: Backend<TTx>): Backend<TTx> {
  if ((backend as unknown as Record<symbol, unknown>)[GUARDED]) return backend;
  const missing = BACKEND_METHODS.filter(
    (m) => typeof (backend as unknown as Record<string, unknown>)[m] !== "function",
  );
  if (missing.length > 0) {
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      `The backend "${backend.name}" is missing methods: ${missing.join(", ")}.`,
      {
        context: { backend: backend.name, missing },
      },
    );
  }

  let closing: Promise<void> | undefined;
  let migrating: ReturnType<Backend<TTx>["migrate"]> | undefined;
  let migrated: Awaited<ReturnType<Backend<TTx>["migrate"]>> | undefined;

  const closedError = (method: string) =>
    new SoniqError("SONIQ_CLOSED", `Cannot call ${method}() on backend "${backend.name}": it was closed.`, {
      context: { backend: backend.name, method },
    });

  const guarded: Record<string | symbol, unknown> = {
    name: backend.name,
    capabilities: Object.freeze({ ...backend.capabilities }),
    [GUARDED]: true,
  };
  const present = OPTIONAL_BACKEND_METHODS.filter(
    (m) => typeof (backend as unknown as Record<string, unknown>)[m] === "function",
  );
  for (const method of [...BACKEND_METHODS, ...present]) {
    const fn = (backend as unknown as Record<string, AnyFn>)[method] as AnyFn;
    guarded[method] = (...args: unknown[]) => {
      if (closing) return Promise.reject(closedError(method));
      return fn.apply(backend, args);
    };
  }
  guarded.migrate = () => {
    if (closing) return Promise.reject(closedError("migrate"));
    if (migrated) return Promise.resolve({ ...migrated, appliedNow: [] });
    if (!migrating) {
      migrating = backend.migrate().then((report) => {
        migrated = report;
        return report;
      });
      migrating.catch(() => {
        migrating = undefined;
      });
    }
    return migrating;
  };
  guarded.close = () => {
    closing ??= Promise.resolve().then(() => backend.close());
    return closing;
  };
  guarded.unwrap = () => backend;
  return guarded as unknown as Backend<TTx>;
}

/** The backend a guard wraps (for backend-specific escape hatches and tests). */
export function unwrapBackend<TTx>(backend: Backend<TTx>): Backend<TTx> {
  const unwrap = (backend as unknown as { unwrap?: () => Backend<TTx> }).unwrap;
  return typeof unwrap === "function" ? unwrap() : backend;
}
