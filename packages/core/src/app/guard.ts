/**
 * Core's wrapper around any backend, so third-party backends get the lifecycle guarantees and the
 * id normalisation for free:
 * - every method of the core facets must exist, and of every capability facet the backend declares, and a method
 *   whose last parameter changes what it does must declare it (`runs.settle`'s `workerId`, `leases.tryAcquire`'s
 *   `takeOver`): one `SONIQ_INVALID_OPTIONS` error lists what is missing or dropped. A capability it does not
 *   declare becomes a facet whose methods reject with `SONIQ_UNSUPPORTED` naming it, and `supports(capability)`
 *   tells which are declared.
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
  BACKEND_CAPABILITIES,
  BACKEND_FACETS,
  type Backend,
  type BackendCapability,
  type BackendFacetName,
  CORE_FACETS,
  type GuardedBackend,
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
  steps: { list: Object.freeze([]) },
  webhooks: {
    getEndpoint: null,
    updateEndpoint: null,
    removeEndpoint: false,
    getDelivery: null,
    redeliver: false,
  },
};

const CORE = new Set<string>(CORE_FACETS);

/** The capabilities a backend declares: the optional facets it has, and `runs.reportProgress`. */
export function declaredCapabilities(backend: Backend<unknown>): Set<BackendCapability> {
  const b = backend as unknown as Record<string, Record<string, unknown> | undefined>;
  const declared = new Set<BackendCapability>();
  if ((backend as unknown as Record<symbol, unknown>)[GUARDED]) {
    const guarded = backend as unknown as GuardedBackend<unknown>;
    for (const capability of BACKEND_CAPABILITIES) if (guarded.supports(capability)) declared.add(capability);
    return declared;
  }
  for (const capability of BACKEND_CAPABILITIES) {
    const present =
      capability === "progress" ? typeof b.runs?.reportProgress === "function" : b[capability] !== undefined;
    if (present) declared.add(capability);
  }
  return declared;
}

function missingMethods(backend: Backend<unknown>, declared: ReadonlySet<BackendCapability>): string[] {
  const missing: string[] = [];
  const b = backend as unknown as Record<string, Record<string, unknown> | undefined>;
  for (const [facet, methods] of Object.entries(BACKEND_FACETS)) {
    if (!CORE.has(facet) && !declared.has(facet as BackendCapability)) continue;
    const f = b[facet];
    for (const m of methods) {
      if (typeof f !== "object" || f === null || typeof f[m] !== "function") missing.push(`${facet}.${m}`);
    }
  }
  if (typeof (backend as { close?: unknown }).close !== "function") missing.push("close");
  return missing;
}

/**
 * Methods whose optional last parameter changes what they do, with the parameter count their implementation must
 * declare. TypeScript lets an implementation declare fewer parameters than the contract's method (`settle(items)`
 * satisfies `settle(items, workerId?)`, required or not), so a port that drops one compiles and silently loses it
 * (here: the worker fence, the stale-holder takeover); the guard checks `Function.length` instead. A function
 * declaring no parameter passes (a forwarding `(...args) =>` wrapper, or a stub that ignores them all), and so does
 * one giving the parameter a default value, which `length` does not count: declare it without one.
 */
const ARITY: { [F in BackendFacetName]?: { [method: string]: { length: number; dropped: string } } } = {
  runs: { settle: { length: 2, dropped: "workerId" } },
  leases: { tryAcquire: { length: 4, dropped: "takeOver" } },
};

function droppedParameters(backend: Backend<unknown>): string[] {
  const dropped: string[] = [];
  const b = backend as unknown as Record<string, Record<string, unknown> | undefined>;
  for (const [facet, methods] of Object.entries(ARITY)) {
    for (const [method, { length, dropped: parameter }] of Object.entries(methods)) {
      const fn = b[facet]?.[method];
      if (typeof fn !== "function" || fn.length === 0 || fn.length >= length) continue;
      dropped.push(
        `${facet}.${method} declares ${fn.length} of its ${length} parameters (drops ${parameter})`,
      );
    }
  }
  return dropped;
}

/** The error a call to a capability the backend does not declare rejects with. */
export function unsupported(backendName: string, capability: BackendCapability, what: string): SoniqError {
  return new SoniqError(
    "SONIQ_UNSUPPORTED",
    `The backend "${backendName}" does not support ${capability} (${what}): it does not declare the "${capability}" capability.`,
    { context: { backend: backendName, capability, method: what } },
  );
}

/**
 * `service` with every method replaced by one that rejects with `SONIQ_UNSUPPORTED` naming `capability`: the
 * app's noun for a capability its backend does not declare (`soniq.flows` on a backend without flows).
 */
export function refusingService<T extends object>(
  service: T,
  backendName: string,
  capability: BackendCapability,
): T {
  const refusing: Record<string, unknown> = {};
  const noun = capability;
  for (
    let proto = Object.getPrototypeOf(service);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const method of Object.getOwnPropertyNames(proto)) {
      if (method === "constructor" || method in refusing) continue;
      if (typeof Object.getOwnPropertyDescriptor(proto, method)?.value !== "function") continue;
      refusing[method] = () => Promise.reject(unsupported(backendName, capability, `${noun}.${method}`));
    }
  }
  return Object.freeze(refusing) as T;
}

export function guardBackend<TTx>(backend: Backend<TTx>): GuardedBackend<TTx> {
  if ((backend as unknown as Record<symbol, unknown>)[GUARDED])
    return backend as unknown as GuardedBackend<TTx>;
  const name = (backend as { name?: unknown } | null)?.name;
  const declared = declaredCapabilities(backend as Backend<unknown>);
  const missing = missingMethods(backend as Backend<unknown>, declared);
  const dropped = droppedParameters(backend as Backend<unknown>);
  if (missing.length > 0 || dropped.length > 0) {
    const problems = [
      ...(missing.length > 0 ? [`is missing methods: ${missing.join(", ")}`] : []),
      ...(dropped.length > 0 ? [`has methods that drop a parameter: ${dropped.join("; ")}`] : []),
    ];
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      `The backend "${String(name)}" ${problems.join(", and ")}.`,
      {
        context: { backend: name, missing, dropped },
      },
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
    const wrapped: Facet = {};
    if (!CORE.has(facetName) && !declared.has(facetName as BackendCapability)) {
      for (const method of methods) {
        const label = `${facetName}.${method}`;
        wrapped[method] = () =>
          Promise.reject(
            closing ? closedError(label) : unsupported(backend.name, facetName as BackendCapability, label),
          );
      }
      guarded[facetName] = Object.freeze(wrapped);
      continue;
    }
    const byId = BY_ID[facetName] ?? {};
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

  const runs = guarded.runs as Facet;
  const reportProgress = backend.runs.reportProgress;
  guarded.runs = Object.freeze({
    ...runs,
    reportProgress: (...args: unknown[]) => {
      if (closing) return Promise.reject(closedError("runs.reportProgress"));
      if (!reportProgress)
        return Promise.reject(unsupported(backend.name, "progress", "runs.reportProgress"));
      return (reportProgress as AnyFn).apply(backend.runs, args);
    },
  });
  guarded.supports = (capability: BackendCapability) => declared.has(capability);

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
  return guarded as unknown as GuardedBackend<TTx>;
}

/** The backend a guard wraps (for backend-specific escape hatches and tests). */
export function unwrapBackend<TTx>(backend: Backend<TTx>): Backend<TTx> {
  const unwrap = (backend as unknown as { unwrap?: () => Backend<TTx> }).unwrap;
  return typeof unwrap === "function" ? unwrap() : backend;
}
