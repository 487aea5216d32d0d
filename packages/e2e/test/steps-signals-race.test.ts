/**
 * 200 signals racing 200 waits across 4 worker processes (issue 40 item 8). Each job waits for a signal "go"
 * (a 10-minute timeout); this process sends every job its own signal, in a shuffled order and several at a
 * time, right after enqueueing them, while the 4 workers claim the jobs and suspend them. Whichever comes first
 * (the signal, buffered; or the wait, woken by the signal), every job finishes with its own payload, each signal
 * is consumed exactly once (its row has consumed_at and consumed_by), none is left, and nothing is stranded: all
 * done within a bounded wait. SQL backends only (processes share the database).
 */
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";
import { type Child, killAll, readEffects, sqlRows, startChild, tempDir } from "./steps-support.js";

const JOBS = 200;
const PROCESSES = 4;
/** Signals in flight at once from this process (SQLite runs them one after another anyway). */
const SENDERS = 8;

interface SignalRow {
  job_id: string;
  name: string;
  payload: string;
  consumed: number;
  consumed_by: string | null;
}

const SIGNALS = {
  sqlite: `SELECT job_id, name, payload, (consumed_at IS NOT NULL) AS consumed, consumed_by
    FROM soniq_job_signals`,
  postgres: `SELECT job_id::text AS job_id, name, payload::text AS payload,
      (consumed_at IS NOT NULL)::int AS consumed, consumed_by
    FROM soniq_job_signals`,
};

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe.each(
  [sqliteKind, postgresKind].map((make) => [make().name as "sqlite" | "postgres", make] as const),
)("steps/signals-race on %s", (name, make) => {
  const kind = make();
  const dir = tempDir();
  beforeAll(() => kind.setup(), 30_000);
  afterAll(async () => {
    dir.remove();
    await kind.teardown();
  }, 30_000);

  it(`steps/signals-race-waits: ${JOBS} signals sent while ${PROCESSES} worker processes claim and suspend ${JOBS} waits: each consumed exactly once, each job done with its own payload`, async () => {
    const queue = uniqueName("q");
    const soniq = new Soniq({ backend: kind.create(), allowUnknownJobNames: true });
    const children: Child[] = [];
    try {
      await soniq.setup();
      const effects = dir.path(`${queue}.effects`);
      children.push(
        ...(await Promise.all(
          Array.from({ length: PROCESSES }, () =>
            startChild(name, kind.target(), queue, "waiter", { effects, concurrency: 10 }),
          ),
        )),
      );
      const handles = await soniq.jobs.enqueueMany(
        Array.from({ length: JOBS }, (_, n) => ({ job: "steps.wait_go", args: { n }, options: { queue } })),
      );
      const order = shuffled(handles.map((h, n) => ({ id: h.id, n })));
      const sent: { status: string; woke: boolean }[] = [];
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          for (let next = order.shift(); next !== undefined; next = order.shift()) {
            sent.push(await soniq.jobs.signal(next.id, "go", { n: next.n }, { key: `go-${next.n}` }));
          }
        }),
      );
      expect(sent.filter((s) => s.status === "stored")).toHaveLength(JOBS);

      await eventually(async () => {
        expect((await soniq.jobs.stats({ queue })).done).toBe(JOBS);
      }, 45_000);
      const jobs = await Promise.all(handles.map((h) => soniq.jobs.get(h.id)));
      jobs.forEach((job, n) => {
        expect(job, `job ${n}`).toMatchObject({ status: "done", attempts: 1, result: { n, got: { n } } });
      });
      const checkpoints = await Promise.all(handles.map((h) => soniq.jobs.steps(h.id)));
      checkpoints.forEach((steps, n) => {
        expect(
          steps.map((s) => [s.name, s.kind, s.state, s.value]),
          `job ${n}`,
        ).toEqual([["go", "signal", "done", { n }]]);
      });

      // Every signal row consumed exactly once: one row per job, consumed, by the wait, never left over.
      const rows = await sqlRows<SignalRow>(name, kind.target(), SIGNALS[name]);
      expect(rows).toHaveLength(JOBS);
      const byJob = new Map(rows.map((r) => [r.job_id, r]));
      expect(byJob.size).toBe(JOBS);
      handles.forEach((h, n) => {
        const row = byJob.get(h.id);
        expect(row, `the signal of job ${n}`).toMatchObject({
          name: "go",
          consumed: 1,
          consumed_by: expect.any(String),
        });
        expect(JSON.parse(row?.payload as string)).toEqual({ n });
      });
      // The code after the wait ran once per job, with that job's payload.
      const got = readEffects(effects);
      expect(got).toHaveLength(JOBS);
      expect(new Set(got.map((e) => e.job)).size).toBe(JOBS);
      for (const e of got) expect(e.got).toEqual({ n: e.n });
      // The jobs were spread over the processes.
      expect(new Set(got.map((e) => e.pid)).size).toBeGreaterThan(1);
      console.info(
        `steps/signals-race on ${name}: ${sent.filter((s) => s.woke).length} of ${JOBS} signals woke a suspended wait`,
      );
    } finally {
      await killAll(children);
      await soniq.close();
    }
  }, 120_000);
});
