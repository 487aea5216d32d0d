/**
 * 200 concurrent waiters on Postgres: one LISTEN connection and the pool serve them all (no connection and no
 * poll loop per waiter), and each hears its job's outcome.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gate, postgresKind, uniqueName } from "./runtime-support.js";

describe("results on postgres", () => {
  const kind = postgresKind();
  beforeAll(() => kind.setup(), 30_000);
  afterAll(() => kind.teardown(), 30_000);

  it("results/200-waiters-bounded-connections: 200 waiters of one instance use at most its pool and one LISTEN connection", async () => {
    const url = new URL(kind.target());
    const queue = uniqueName("q");
    const worker = new Soniq({ backend: postgresBackend({ connectionString: url.toString() }) });
    url.searchParams.set("application_name", "soniq_waiters");
    const waiters = new Soniq({
      backend: postgresBackend({ connectionString: url.toString() }),
      allowUnknownJobNames: true,
    });
    const probe = new pg.Client({ connectionString: kind.target() });
    await probe.connect();
    try {
      await worker.setup();
      const release = gate();
      worker.job(
        "results.wide",
        async (args: { i: number }) => {
          await release.promise;
          return args.i;
        },
        { queue },
      );
      const handles = await waiters.jobs.enqueueMany(
        Array.from({ length: 200 }, (_, i) => ({ job: "results.wide", args: { i }, options: { queue } })),
      );
      const outcomes = Promise.all(handles.map((handle) => handle.result({ timeoutMs: 30_000 })));
      const connections = async () =>
        Number(
          (
            await probe.query(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'soniq_waiters'",
            )
          ).rows[0]?.n,
        );
      let most = 0;
      const sampling = setInterval(() => {
        void connections().then((n) => {
          most = Math.max(most, n);
        });
      }, 20);
      const started = worker.worker({ queues: [queue], concurrency: 20, pollIntervalMs: 20 });
      await started.start();
      await new Promise((resolve) => setTimeout(resolve, 300)); // the waiters' first reads run meanwhile
      release.open();
      const results = await outcomes;
      clearInterval(sampling);
      most = Math.max(most, await connections());
      expect(results.map((o) => (o.status === "done" ? o.result : null))).toEqual(
        Array.from({ length: 200 }, (_, i) => i),
      );
      // The pool's 10 connections and the LISTEN connection, whatever the number of waiters.
      expect(most).toBeGreaterThanOrEqual(2); // LISTEN plus at least one pooled read
      expect(most).toBeLessThanOrEqual(11);
      await started.stop();
    } finally {
      await probe.end();
      await Promise.allSettled([waiters.close(), worker.close()]);
    }
  }, 60_000);
});
