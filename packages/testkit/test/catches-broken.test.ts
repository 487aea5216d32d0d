/**
 * The kit's cases fail on backends broken the way a port goes wrong: a list that ignores its `q` or `ids`
 * filter, a limited claim that ignores `limitedMax` or never says `capped`. Each broken backend is the memory
 * backend with one facet method wrapped; the named case runs on it through the kit's own registration and
 * must fail (and passes on the unbroken backend, so the failure is the break's).
 */

import type {
  Backend,
  ClaimRequest,
  DeadLetterListQuery,
  JobListQuery,
  NewJob,
  Settlement,
  TaskRegistration,
} from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import { memoryBackend, memoryInspector } from "../../backend-memory/src/index.js";
import { registerConformanceSuite } from "../src/register.js";
import type { RunnerTestContext, TestRunner } from "../src/types.js";

type Break = (backend: Backend<never>) => void;

/** Registers the kit on a collecting runner over the memory backend with `broken` applied; runs case `id`. */
async function runCase(id: string, broken: Break | null): Promise<void> {
  const tests = new Map<string, (t: RunnerTestContext) => Promise<void>>();
  const runner: TestRunner = {
    describe: (_name, body) => body(),
    test: (name, fn) => tests.set(name.slice(0, name.indexOf(":")), fn),
  };
  await registerConformanceSuite({
    name: `broken: ${id}`,
    runner,
    leakCheck: false,
    harness: () => {
      const backend = memoryBackend() as unknown as Backend<never>;
      const inspector = memoryInspector(backend as never);
      broken?.(backend);
      return { backend, inspector };
    },
  });
  const test = tests.get(id);
  if (!test) throw new Error(`case ${id} was not registered`);
  await test({ skip: () => {} } as unknown as RunnerTestContext);
}

const breaks: [string, string, Break][] = [
  [
    "jobs.list ignores q",
    "jobs/filter-q",
    (b) => {
      const list = b.jobs.list.bind(b.jobs);
      b.jobs.list = (q: JobListQuery) => list({ ...q, q: null });
    },
  ],
  [
    "jobs.list ignores ids",
    "jobs/filter-ids",
    (b) => {
      const list = b.jobs.list.bind(b.jobs);
      b.jobs.list = (q: JobListQuery) => list({ ...q, ids: null });
    },
  ],
  [
    "deadLetters.list ignores q",
    "dlq/filter-q",
    (b) => {
      const list = b.deadLetters.list.bind(b.deadLetters);
      b.deadLetters.list = (q: DeadLetterListQuery) => list({ ...q, q: null });
    },
  ],
  [
    "deadLetters.list ignores ids",
    "dlq/filter-ids-and-bulk-match",
    (b) => {
      const list = b.deadLetters.list.bind(b.deadLetters);
      b.deadLetters.list = (q: DeadLetterListQuery) => list({ ...q, ids: null });
    },
  ],
  [
    "the limited claim ignores limitedMax",
    "claim/limited-max-goes-in-claim-order",
    (b) => {
      const claim = b.runs.claim.bind(b.runs);
      b.runs.claim = (r: ClaimRequest) => claim({ ...r, limitedMax: undefined });
    },
  ],
  [
    "the limited claim never says capped",
    "queues/limits-count-every-worker",
    (b) => {
      const claim = b.runs.claim.bind(b.runs);
      b.runs.claim = async (r: ClaimRequest) => ({ ...(await claim(r)), capped: null });
    },
  ],
  [
    "enqueueMany drops argsVersion",
    "jobs/args-version-stored",
    (b) => {
      const enqueueMany = b.jobs.enqueueMany.bind(b.jobs);
      b.jobs.enqueueMany = (jobs: readonly NewJob[], o) =>
        enqueueMany(
          jobs.map((j) => ({ ...j, argsVersion: null })),
          o,
        );
    },
  ],
  [
    "the dead-letter read forgets args_version",
    "jobs/args-version-stored",
    (b) => {
      const get = b.deadLetters.get.bind(b.deadLetters);
      b.deadLetters.get = async (id: string) => {
        const row = await get(id);
        return row === null ? null : { ...row, argsVersion: null };
      };
    },
  ],
  [
    "a requeue keeps the claim's attempts instead of the ones it carries",
    "jobs/args-version-give-back",
    (b) => {
      const settle = b.runs.settle.bind(b.runs);
      b.runs.settle = (items: readonly Settlement[], workerId?: string) =>
        settle(
          items.map((i) => (i.kind === "requeue" ? { ...i, attempts: i.attempt } : i)),
          workerId,
        );
    },
  ],
  [
    "registering a task again keeps its first version",
    "workers/task-versions",
    (b) => {
      const register = b.workers.registerTaskNames.bind(b.workers);
      const first = new Map<string, number | null>();
      b.workers.registerTaskNames = (workerId: string, tasks: readonly TaskRegistration[]) =>
        register(
          workerId,
          tasks.map((t) => {
            const key = `${workerId}\u0000${t.name}`;
            if (!first.has(key)) first.set(key, t.version);
            return { name: t.name, version: first.get(key) ?? null };
          }),
        );
    },
  ],
];

describe("testkit/catches-broken", () => {
  for (const [what, id, broken] of breaks) {
    it(`testkit/catches-broken: ${id} fails when ${what}, passes unbroken`, async () => {
      await runCase(id, null);
      const failure = await runCase(id, broken).then(
        () => null,
        (err: unknown) => err,
      );
      expect(failure, `${id} passed on a backend whose ${what}`).toBeInstanceOf(Error);
    });
  }
});
