/**
 * A worker process killed hard (SIGKILL) while its job runs, whether a started worker or a script's
 * `runOnce()` ran it: after the stale threshold a peer's maintenance requeues the job and a worker in
 * this process runs it to completion. SQL backends only: the memory backend cannot be shared between
 * processes.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";

const CHILD = fileURLToPath(new URL("./runtime-child-worker.ts", import.meta.url));

describe.each([sqliteKind, postgresKind].map((make) => [make().name, make] as const))(
  "runtime/process-kill on %s",
  (name, make) => {
    const kind = make();
    beforeAll(() => kind.setup(), 30_000);
    afterAll(() => kind.teardown(), 30_000);

    it.each([
      ["start", "a started worker"],
      ["once", "runOnce"],
    ] as const)(
      "runtime/killed-worker-recovered (%s): the job of %s SIGKILLed mid-job is requeued and finished by a peer",
      async (mode, _what) => {
        const queue = uniqueName("q");
        const soniq = new Soniq({ backend: kind.create() });
        let child: ChildProcess | undefined;
        try {
          await soniq.setup();
          soniq.job(
            "process.kill_me",
            async (_args, ctx) => `finished by ${ctx.workerId} on attempt ${ctx.attempt}`,
            {
              queue,
            },
          );
          const keeper = soniq.worker({
            queues: [uniqueName("idle")],
            heartbeatIntervalMs: 50,
            staleAfterMs: 400,
            maintenanceIntervalMs: 100,
          });
          await keeper.start();
          expect(await soniq.backend.leases.tryAcquire("soniq.maintenance", keeper.id, 1000)).toBe(true);

          const target = kind.target();
          child = fork(CHILD, [name, target, queue, mode], {
            execArgv: ["--conditions=source", "--import", "tsx"],
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          });
          const messages: Record<string, string>[] = [];
          child.on("message", (m) => messages.push(m as Record<string, string>));
          await eventually(() => expect(messages.some((m) => m.ready)).toBe(true), 45_000);
          const { id } = await soniq.jobs.enqueue("process.kill_me", {});
          const started = await eventually(() => {
            const m = messages.find((msg) => msg.started === id);
            expect(m).toBeDefined();
            return m as Record<string, string>;
          }, 10_000);
          expect(await soniq.jobs.get(id)).toMatchObject({
            status: "processing",
            workerId: started.workerId,
          });
          child.kill("SIGKILL");

          const worker = soniq.worker({ queues: [queue], pollIntervalMs: 50, heartbeatIntervalMs: 50 });
          await worker.start();
          await eventually(async () => {
            expect(await soniq.jobs.get(id)).toMatchObject({
              status: "done",
              result: `finished by ${worker.id} on attempt 2`,
            });
          }, 15_000);
          const dead = (await soniq.backend.workers.list()).find((w) => w.id === started.workerId);
          expect(dead?.status).toBe("stopped");
        } finally {
          if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
          await soniq.close();
        }
      },
      90_000,
    );

    it("runtime/killed-lease-holder-taken-over: a worker SIGKILLed while it holds the maintenance lease (TTL 120 s) does not delay a peer whose staleAfterMs is 1 s", async () => {
      const queue = uniqueName("q");
      const soniq = new Soniq({ backend: kind.create() });
      let child: ChildProcess | undefined;
      try {
        await soniq.setup();
        soniq.job("process.kill_me", async (_args, ctx) => `finished on attempt ${ctx.attempt}`, { queue });
        child = fork(CHILD, [name, kind.target(), queue, "start", "lease"], {
          execArgv: ["--conditions=source", "--import", "tsx"],
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        });
        const messages: Record<string, string>[] = [];
        child.on("message", (m) => messages.push(m as Record<string, string>));
        await eventually(() => expect(messages.some((m) => m.ready)).toBe(true), 45_000);
        // The child's maintenance took the lease at start (its TTL follows its staleAfterMs of 120 s).
        expect(await soniq.backend.leases.tryAcquire("soniq.maintenance", "probe", 1)).toBe(false);
        const { id } = await soniq.jobs.enqueue("process.kill_me", {});
        await eventually(() => expect(messages.some((m) => m.started === id)).toBe(true), 10_000);
        child.kill("SIGKILL");

        const t0 = Date.now();
        const peer = soniq.worker({
          queues: [queue],
          pollIntervalMs: 50,
          heartbeatIntervalMs: 50,
          staleAfterMs: 1000,
          maintenanceIntervalMs: 100,
        });
        await peer.start();
        await eventually(async () => {
          expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "finished on attempt 2" });
        }, 15_000);
        expect(Date.now() - t0).toBeLessThan(15_000);
      } finally {
        if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await soniq.close();
      }
    }, 90_000);
  },
);
