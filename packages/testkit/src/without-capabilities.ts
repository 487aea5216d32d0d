/**
 * A copy of a backend that no longer declares some capabilities (all of them by default): their facets are
 * left out, and `progress` drops `runs.reportProgress`. What a third party's first backend looks like; the
 * kit's own suite certifies one built from the memory backend, and apps refuse what it lacks.
 */
import {
  BACKEND_CAPABILITIES,
  BACKEND_FACETS,
  type Backend,
  type BackendCapability,
  type RunsFacet,
} from "@soniq/core/backend";

export function withoutCapabilities<TTx>(
  backend: Backend<TTx>,
  capabilities: readonly BackendCapability[] = BACKEND_CAPABILITIES,
): Backend<TTx> {
  const copy: Record<string, unknown> = { ...backend };
  // The methods a backend object carries (close, replicationStatus) keep their `this`.
  copy.close = () => backend.close();
  for (const capability of capabilities) {
    if (capability === "progress") {
      // The run methods but `reportProgress`, bound (a facet may be a class instance).
      const runs = backend.runs as unknown as Record<string, (...args: unknown[]) => unknown>;
      copy.runs = Object.fromEntries(
        BACKEND_FACETS.runs.map((method) => [method, runs[method]?.bind(runs)]),
      ) as unknown as RunsFacet;
    } else delete copy[capability];
  }
  return copy as unknown as Backend<TTx>;
}
