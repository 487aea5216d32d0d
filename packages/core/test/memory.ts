/**
 * The memory backend for core's runtime tests. Imported by path, not as a package: a devDependency on
 * `@soniq/backend-memory` (which depends on core) would make the workspace build graph cyclic.
 */
import { afterEach } from "vitest";
import { memoryBackend } from "../../backend-memory/src/index.js";
import type { Backend, BackendFacetName } from "../src/contract/index.js";
import { Soniq, type SoniqOptions } from "../src/index.js";

export { memoryBackend };

/**
 * Call at a test file's top level: returns `app(options, backend)`, which makes a `Soniq` on a fresh
 * memory backend (or the one given) and closes it after the test.
 */
export function memoryApps(): (options?: Partial<SoniqOptions>, backend?: Backend<unknown>) => Soniq {
  const open: Soniq[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return (options = {}, backend = memoryBackend()) => {
    const soniq = new Soniq({ backend, ...options });
    open.push(soniq);
    return soniq;
  };
}

/** A copy of `backend` with some methods of one facet replaced (to inject failures or latency). */
export function overriding<B extends Backend<unknown>, F extends BackendFacetName>(
  backend: B,
  facet: F,
  methods: Partial<B[F]>,
): B {
  return { ...backend, [facet]: { ...backend[facet], ...methods } };
}

/** Claims every due job (of `queues`, default all) and dead-letters it (`permanent_failure`); returns the ids. */
export async function deadLetterAllDue(
  backend: Backend<unknown>,
  queues: readonly string[] | null = null,
): Promise<string[]> {
  const claimed = (await backend.runs.claim({ queues, limit: 10_000, workerId: null })).jobs;
  await backend.runs.settle(
    claimed.map((j) => ({
      kind: "dead_letter" as const,
      id: j.id,
      attempt: j.attempts,
      reason: "permanent_failure" as const,
      error: null,
      tags: null,
    })),
  );
  return claimed.map((j) => j.id);
}
