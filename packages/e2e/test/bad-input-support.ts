/**
 * The bad-input catalogue's shared part (the cases are split by area: bad-input-*.test.ts). Every public
 * entry point of Soniq, fed wrong input, on every backend: each case asserts the SoniqError code (never a
 * raw TypeError, RangeError or driver error) and that nothing was written (jobs, dead letters, workers,
 * queue settings and audit rows compared before and after).
 *
 * The codes follow one rule: an options argument that is not an object (`null` included: no options means
 * leaving it out) or has an unknown key is SONIQ_INVALID_OPTIONS, and so is a bad value in an option table
 * (constructor, job, enqueue, worker, replay overrides, scheduler, periodic); filters, the shape of
 * `enqueueMany` items, ids, names, limits, counts, queue settings, `actor`, `dryRun`, `maxJobs` and any
 * argument to a call that takes none are SONIQ_INVALID_ARGUMENT; job names
 * SONIQ_INVALID_TASK_NAME or SONIQ_UNKNOWN_TASK_NAME; args SONIQ_TASK_ARGS_INVALID; a `tx` the backend
 * cannot join SONIQ_TRANSACTION_UNSUPPORTED.
 */
import { type Backend, isSoniqError, Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_KINDS } from "./runtime-support.js";

export interface Fixture {
  soniq: Soniq;
  /** A queued job's id and a dead-letter row's id. */
  jobId: string;
  deadId: string;
  /** `bad.echo`'s definition, with one schedule (`bad.hourly`) declared for it. */
  echo: ReturnType<Soniq["job"]>;
}

/** One bad call: its stable id (`entry/what`), the code it must get, and the call. */
export type Case = readonly [id: string, code: string, call: (f: Fixture) => unknown];

/** A value nested `depth` levels deep. */
export function deep(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** The code `call` fails with, or a description of what it did instead. */
export async function codeOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (err) {
    if (isSoniqError(err)) return err.code;
    return `not a SoniqError: ${String(err)}`;
  }
  return "no error";
}

/** What a bad call must not change. */
async function footprint(soniq: Soniq): Promise<unknown> {
  const stats = await soniq.jobs.stats();
  const dead = await soniq.deadLetters.list({ limit: 1000 });
  const workers = await soniq.backend.workers.list();
  const queues = await soniq.queues.list();
  const audit = await soniq.audit.list({ limit: 1000 });
  return {
    stats,
    dead: dead.map((d) => [d.id, d.resurrectionCount]),
    workers: workers.length,
    queues: queues.map((q) => [q.name, q.paused, q.concurrency, q.groupConcurrency, q.rateLimit]),
    // An operator action that names nothing is audited as not_found by design (schedules.trigger/unknown).
    audit: audit.filter((a) => a.outcome !== "not_found").map((a) => a.id),
  };
}

/** A Soniq on `backend` with `bad.echo` (and its schedule `bad.hourly`), one dead letter and one queued job. */
async function fixture(backend: Backend<unknown>): Promise<Fixture> {
  const soniq = new Soniq({ backend });
  await soniq.setup();
  const echo = soniq.job("bad.echo", async (args: unknown) => args);
  soniq.schedules.declare(echo, { every: "1h", name: "bad.hourly" });
  soniq.job(
    "bad.dead",
    async () => {
      throw new Error("to the dead-letter table");
    },
    { maxAttempts: 1 },
  );
  const { id: deadId } = await soniq.jobs.enqueue("bad.dead", {});
  await soniq.worker().runOnce();
  const { id: jobId } = await soniq.jobs.enqueue("bad.echo", { n: 1 });
  return { soniq, jobId, deadId, echo };
}

/**
 * Registers `cases` on every backend as `bad-input/<id> -> <code>, nothing written`, over one fixture per
 * backend; `more` adds the area's other tests to the same describe block (the fixture is ready in them).
 */
export function catalogue(area: string, cases: readonly Case[], more?: (f: () => Fixture) => void): void {
  describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
    `bad-input (${area}) on %s`,
    (_name, make) => {
      const kind = make();
      let f: Fixture | undefined;

      beforeAll(async () => {
        await kind.setup();
        f = await fixture(kind.create());
      }, 30_000);
      afterAll(async () => {
        await f?.soniq.close();
        await kind.teardown();
      }, 30_000);

      const ready = (): Fixture => {
        if (!f) throw new Error("the fixture was not set up");
        return f;
      };

      it.each(cases.map((c) => [c[0], c[1], c[2]] as const))(
        "bad-input/%s -> %s, nothing written",
        async (_id, code, call) => {
          const before = await footprint(ready().soniq);
          expect(await codeOf(() => call(ready()))).toBe(code);
          expect(await footprint(ready().soniq)).toEqual(before);
        },
      );

      more?.(ready);
    },
  );
}
