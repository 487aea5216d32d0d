/**
 * A cancel that lands while a transactional step runs (issue 40 item 8). The step writes a row of the
 * application's own table (`app_orders`) through `tx`; the worker runs on one instance, the cancel comes from
 * another (a web server's), as in production.
 *
 * - PostgreSQL: the step's function holds its transaction open on a gate; the cancel does not wait for it (no
 *   lock on the job's row is taken before the function ran); once the gate opens the fence fails, the
 *   application's row is rolled back with the checkpoint, and the run gets SONIQ_LEASE_LOST. The same for
 *   `ctx.complete({ transaction: true })`: no row, no result, the job stays cancelled.
 * - SQLite has one writer: a step's BEGIN IMMEDIATE holds the write lock, so a cancel from another process waits
 *   for it (busy_timeout) and commits after the step. A worker process holds the step's transaction until the
 *   test opens a gate and cancels at once: the row and the checkpoint exist together, the job is cancelled, and
 *   the run's next step gets SONIQ_LEASE_LOST and stores nothing.
 * - Both: a cancel after the run started and before its transactional step: the function runs, its row is
 *   rolled back by the broken fence, the step is not recorded, SONIQ_LEASE_LOST.
 */
import { existsSync, writeFileSync } from "node:fs";
import { isSoniqError, Soniq } from "@soniq/core";
import type Database from "better-sqlite3";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BackendKind,
  eventually,
  gate,
  postgresKind,
  sqliteKind,
  uniqueName,
} from "./runtime-support.js";
import { type Child, killAll, sqlExec, sqlRows, startChild, tempDir } from "./steps-support.js";

type Kind = "sqlite" | "postgres";

/** Inserts the application's row through the step's tx: synchronously on SQLite, as its transactions are. */
function insertOrder(kind: Kind, tx: unknown, jobId: string): Promise<void> | undefined {
  if (kind === "sqlite") {
    (tx as Database.Database).prepare("INSERT INTO app_orders (job_id) VALUES (?)").run(jobId);
    return undefined;
  }
  return (tx as pg.PoolClient).query("INSERT INTO app_orders (job_id) VALUES ($1)", [jobId]).then(() => {});
}

const codeOf = (err: unknown) => (isSoniqError(err) ? err.code : String(err));

describe.each([sqliteKind, postgresKind].map((make) => [make().name as Kind, make] as const))(
  "steps/cancel-transactional on %s",
  (name, make) => {
    const kind: BackendKind = make();
    const dir = tempDir();
    beforeAll(() => kind.setup(), 30_000);
    afterAll(async () => {
      dir.remove();
      await kind.teardown();
    }, 30_000);

    /** A worker instance and a second instance over the same database (the canceller), the app table made. */
    async function pair() {
      const worker = new Soniq({ backend: kind.create() });
      await worker.setup();
      const web = new Soniq({ backend: kind.createPeer(), allowUnknownJobNames: true });
      await sqlExec(name, kind.target(), "CREATE TABLE IF NOT EXISTS app_orders (job_id text PRIMARY KEY)");
      return { worker, web, close: () => Promise.all([worker.close(), web.close()]) };
    }

    const orders = (jobId: string) =>
      sqlRows<{ job_id: string }>(
        name,
        kind.target(),
        `SELECT job_id FROM app_orders WHERE job_id = '${jobId}'`,
      );

    it("steps/cancel-before-transactional-step: the function's row is rolled back by the fence, the step is not recorded, the run gets SONIQ_LEASE_LOST", async () => {
      const queue = uniqueName("q");
      const { worker, web, close } = await pair();
      try {
        const started = gate();
        const release = gate();
        const seen = gate<string>();
        let functionRan = false;
        worker.job(
          "steps.cancel_before",
          async (_args: Record<string, never>, ctx) => {
            started.open();
            await release.promise;
            try {
              await ctx.step("charge", { transaction: true }, (tx) => {
                functionRan = true;
                return insertOrder(name, tx, ctx.jobId);
              });
              seen.open("recorded");
            } catch (err) {
              seen.open(codeOf(err));
              throw err;
            }
            return "charged";
          },
          { queue },
        );
        const w = worker.worker({ queues: [queue], pollIntervalMs: 20, heartbeatIntervalMs: 50 });
        await w.start();
        try {
          const { id } = await web.jobs.enqueue("steps.cancel_before", {}, { queue });
          await started.promise;
          expect(await web.jobs.cancel(id)).toBe(true);
          release.open();
          expect(await seen.promise).toBe("SONIQ_LEASE_LOST");
          expect(functionRan).toBe(true);
          expect(await orders(id)).toEqual([]);
          expect(await web.jobs.steps(id)).toEqual([]);
          expect(await web.jobs.get(id)).toMatchObject({ status: "cancelled", result: null });
        } finally {
          release.open();
          await w.stop();
        }
      } finally {
        await close();
      }
    }, 60_000);

    if (name === "postgres") {
      it.each([
        ["step", "ctx.step(name, { transaction: true })"],
        ["complete", "ctx.complete({ transaction: true })"],
      ] as const)(
        "steps/cancel-mid-transaction (%s): a cancel does not wait for the open transaction of %s; the application's row is rolled back, nothing is recorded, the run gets SONIQ_LEASE_LOST",
        async (what, _how) => {
          const queue = uniqueName("q");
          const { worker, web, close } = await pair();
          try {
            const inTransaction = gate();
            const release = gate();
            const seen = gate<string>();
            worker.job(
              "steps.cancel_mid",
              async (_args: Record<string, never>, ctx) => {
                const body = async (tx: unknown) => {
                  await insertOrder(name, tx, ctx.jobId);
                  inTransaction.open();
                  await release.promise;
                  return { charged: ctx.jobId };
                };
                try {
                  if (what === "complete") {
                    const completed = await ctx.complete({ transaction: true }, body);
                    seen.open("recorded");
                    return completed;
                  }
                  await ctx.step("charge", { transaction: true }, body);
                  seen.open("recorded");
                } catch (err) {
                  seen.open(codeOf(err));
                  throw err;
                }
                return "after charge";
              },
              { queue },
            );
            const w = worker.worker({ queues: [queue], pollIntervalMs: 20, heartbeatIntervalMs: 50 });
            await w.start();
            try {
              const { id } = await web.jobs.enqueue("steps.cancel_mid", {}, { queue });
              await inTransaction.promise;
              // The step's transaction is open with the application's row written: the cancel goes through.
              expect(await web.jobs.cancel(id)).toBe(true);
              expect(await web.jobs.get(id)).toMatchObject({ status: "cancelled" });
              release.open();
              expect(await seen.promise).toBe("SONIQ_LEASE_LOST");
              expect(await orders(id)).toEqual([]);
              expect(await web.jobs.steps(id)).toEqual([]);
              expect(await web.jobs.get(id)).toMatchObject({ status: "cancelled", result: null });
              // Nothing of the application's transaction stays open (its connection went back to the pool).
              await eventually(async () => {
                const open = await sqlRows<{ n: number }>(
                  name,
                  kind.target(),
                  "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
                );
                expect(open[0]?.n).toBe(0);
              });
            } finally {
              release.open();
              await w.stop();
            }
          } finally {
            await close();
          }
        },
        60_000,
      );
    } else {
      it("steps/cancel-racing-transactional-step: a cancel from another process waits for the step's BEGIN IMMEDIATE; the row and the checkpoint commit together, then the run's next step gets SONIQ_LEASE_LOST", async () => {
        const queue = uniqueName("q");
        const web = new Soniq({ backend: kind.create(), allowUnknownJobNames: true });
        let child: Child | undefined;
        try {
          await web.setup();
          await sqlExec(name, kind.target(), "CREATE TABLE app_orders (job_id text PRIMARY KEY)");
          const marker = dir.path(`${queue}.marker`);
          const gateFile = dir.path(`${queue}.gate`);
          child = await startChild(name, kind.target(), queue, "hold", {
            effects: dir.path(`${queue}.effects`),
            marker,
            gate: gateFile,
          });
          const { id } = await web.jobs.enqueue("steps.hold", {}, { queue });
          // The child's step wrote the row and holds its transaction (and SQLite's write lock).
          await eventually(() => expect(existsSync(marker)).toBe(true), 15_000);
          expect(await orders(id)).toEqual([]);
          writeFileSync(gateFile, "open");
          expect(await web.jobs.cancel(id)).toBe(true);
          await child.next((m) => m.committed === id);
          expect(await orders(id)).toEqual([{ job_id: id }]);
          expect((await web.jobs.steps(id)).map((s) => [s.name, s.state, s.value])).toEqual([
            ["charge", "done", "charged"],
          ]);
          expect(await web.jobs.get(id)).toMatchObject({ status: "cancelled" });
          child.send({ go: id });
          const shipped = await child.next((m) => m.shipError !== undefined);
          expect(shipped.shipError).toBe("SONIQ_LEASE_LOST");
          expect((await web.jobs.steps(id)).map((s) => s.name)).toEqual(["charge"]);
          expect(await web.jobs.get(id)).toMatchObject({ status: "cancelled", result: null });
        } finally {
          await killAll([child]);
          await web.close();
        }
      }, 60_000);
    }
  },
);
