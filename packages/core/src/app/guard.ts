/**
 * Core's wrapper around any backend, so third-party backends get the lifecycle guarantees and the
 * id normalisation for free:
 * - every facet method of `BACKEND_FACETS` must exist (one `SONIQ_INVALID_OPTIONS` error lists what is missing).
 * - after `close()` starts, every call rejects with `SONIQ_CLOSED`; `close()` is memoised.
 * - `migrations.apply()` runs once at a time; a successful run is remembered (later calls resolve with
 *   its report and `appliedNow: []`, since they applied nothing), a failed one may be retried.
 * - job, dead-letter and flow ids are lower-cased; an id that is not a UUID string names no row, so the guard
 *   answers "not found" itself (get -> null, cancel/purge -> false, replay -> null, flows.cancel ->
 *   { cancelled: false }, flows.parents -> {}) without a backend call.
 */

import { SoniqError } from "../common/errors.js";
import { isJobId } from "../common/ids.js";
import {
  BACKEND_FACETS,
  type Backend,
  type BackendFacetName,
  type MigrationReport,
} from "../contract/index.js";

const GUARDED = Symbol.for("soniq.guardedBackend");

type AnyFn = (...args: unknown[]) => Promise<unknown>;
type Facet = Record<string, AnyFn>;

/** The lower-cased id, or null when `id` cannot name a row (not a UUID string). */
function rowId(id: unknown): string | null {
  return isJobId(id) ? id.toLowerCase() : null;
}

/** Methods whose first argument is a row id, and what they answer when it names no row. */
const BY_ID: { [F in BackendFacetName]?: { [method: string]: null | false | Readonly<object> } } = {
  jobs: { get: null, cancel: false },
  deadLetters: { get: null, replay: null, purge: false },
  // Flow and step job ids are UUIDs too (a Postgres uuid column would reject the text outright).
  flows: {
    get: null,
    stepOfJob: null,
    cancel: Object.freeze({ cancelled: false, cancelledJobIds: Object.freeze([]) }),
    parents: Object.freeze({}),
  },
  webhooks: {
    getEndpoint: null,
    updateEndpoint: null,
    removeEndpoint: false,
    getDelivery: null,
    redeliver: false,
  },
};

function missingMethods(backend: Backend<unknown>): string[] {
  const missing: string[] = [];
  const b = backend as unknown as Record<string, Record<string, unknown> | undefined>;
  for (const [facet, methods] of Object.entries(BACKEND_FACETS)) {
    const f = b[facet];
    for (const m of methods) {
      if (typeof f !== "object" || f === null || typeof f[m] !== "function") missing.push(`${facet}.${m}`);
    }
  }
  if (typeof (backend as { close?: unknown }).close !== "function") missing.push("close");
  return missing;
}

export function guardBackend<TTx>(backend: Backend<TTx>): Backend<TTx> {
  if ((backend as unknown as Record<symbol, unknown>)[GUARDED]) return backend;
  const name = (backend as { name?: unknown } | null)?.name;
  const missing = missingMethods(backend as Backend<unknown>);
  if (missing.length > 0) {
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      `The backend "${String(name)}" is missing methods: ${missing.join(", ")}.`,
      { context: { backend: name, missing } },
    );
  }

  let closing: Promise<void> | undefined;
  const closedError = (method: string) =>
    new SoniqError("SONIQ_CLOSED", `Cannot call ${method}() on backend "${backend.name}": it was closed.`, {
      context: { backend: backend.name, method },
    });

  const guarded: Record<string | symbol, unknown> = {
    name: backend.name,
    capabilities: Object.freeze({ ...backend.capabilities }),
    [GUARDED]: true,
  };
  for (const [facetName, methods] of Object.entries(BACKEND_FACETS) as [
    BackendFacetName,
    readonly string[],
  ][]) {
    const facet = backend[facetName] as unknown as Facet;
    const byId = BY_ID[facetName] ?? {};
    const wrapped: Facet = {};
    for (const method of methods) {
      const fn = facet[method] as AnyFn;
      const label = `${facetName}.${method}`;
      const notFound = byId[method];
      wrapped[method] =
        notFound === undefined
          ? (...args) => (closing ? Promise.reject(closedError(label)) : fn.apply(facet, args))
          : (id, ...rest) => {
              if (closing) return Promise.reject(closedError(label));
              const normalised = rowId(id);
              // A fresh copy each time: a caller may change what it gets back.
              if (normalised === null) return Promise.resolve(structuredClone(notFound));
              return fn.call(facet, normalised, ...rest);
            };
    }
    guarded[facetName] = Object.freeze(wrapped);
  }

  let migrating: Promise<MigrationReport> | undefined;
  let migrated: MigrationReport | undefined;
  const migrations = guarded.migrations as Facet;
  guarded.migrations = Object.freeze({
    ...migrations,
    apply: () => {
      if (closing) return Promise.reject(closedError("migrations.apply"));
      if (migrated) return Promise.resolve({ ...migrated, appliedNow: [] });
      if (!migrating) {
        migrating = backend.migrations.apply().then((report) => {
          migrated = report;
          return report;
        });
        migrating.catch(() => {
          migrating = undefined;
        });
      }
      return migrating;
    },
  });
  const replicationStatus = backend.replicationStatus;
  if (replicationStatus) {
    guarded.replicationStatus = () =>
      closing ? Promise.reject(closedError("replicationStatus")) : replicationStatus.call(backend);
  }
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
