/**
 * A worker process SIGKILLed in the middle of a fan-in loses and doubles no release: the release is written
 * in the transaction of the last parent's settle, so whatever the kill cut short either committed whole or
 * not at all. A peer recovers the killed process's jobs and the flow finishes with the child released
 * once, run once, with every parent counted once. SQL backends only (the memory backend is one process).
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";

const CHILD = fileURLToPath(new URL("./flows-child-worker.ts", import.meta.url));
const PARENTS = 400;

describe.each([sqliteKind, postgresKind].map((make) => [make().name, make] as const))(
  "flows/process-kill on %s",
  (name, make) => {
    const kind = make();
    beforeAll(() => kind.setup(), 30_000);
    afterAll(() => kind.teardown(), 30_000);

    it("flows/killed-mid-fan-in: a worker SIGKILLed mid fan-in loses and doubles no release", async () => {
      const queue = uniqueName("q");
      const soniq = new Soniq({ backend: kind.create(), defaultQueue: queue });
      let child: ChildProcess | undefined;
      try {
        await soniq.setup();
        let childRuns = 0;
        let parentsSeen = 0;
        soniq.job("flows.kill_parent", async () => process.pid);
        soniq.job("flows.kill_child", async (_args, ctx) => {
          childRuns++;
          parentsSeen = Object.keys((await ctx.flow?.parents()) ?? {}).length;
          return "peer";
        });
        const steps: Record<string, { job: string; dependsOn?: string[] }> = {};
        const refs = Array.from({ length: PARENTS }, (_, i) => `p${i}`);
        for (const ref of refs) steps[ref] = { job: "flows.kill_parent" };
        steps.child = { job: "flows.kill_child", dependsOn: refs };
        const flow = await soniq.flows.start({ name: "e2e.fan_in", steps });

        child = fork(CHILD, [name, kind.target(), queue], {
          execArgv: ["--conditions=source", "--import", "tsx"],
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        });
        const messages: Record<string, unknown>[] = [];
        child.on("message", (m) => messages.push(m as Record<string, unknown>));
        await eventually(() => expect(messages.some((m) => m.ready)).toBe(true), 45_000);
        // Kill once the child is well into the fan-in, with parents still to run.
        await eventually(async () => {
          const counts = (await soniq.flows.get(flow.id))?.counts;
          expect(counts?.done ?? 0).toBeGreaterThanOrEqual(60);
        }, 30_000);
        child.kill("SIGKILL");
        const before = (await soniq.flows.get(flow.id))?.counts.done ?? 0;
        expect(before).toBeLessThan(PARENTS);

        const peer = soniq.worker({
          queues: [queue],
          concurrency: 8,
          pollIntervalMs: 50,
          heartbeatIntervalMs: 50,
          staleAfterMs: 1000,
          maintenanceIntervalMs: 100,
        });
        await peer.start();
        const done = await soniq.flows.waitFor(flow.id, { timeoutMs: 60_000, pollIntervalMs: 50 });
        await peer.stop();

        expect(done.state).toBe("succeeded");
        expect(done.counts).toEqual({ total: PARENTS + 1, open: 0, done: PARENTS + 1, failed: 0, held: 0 });
        const fanIn = done.steps.find((s) => s.ref === "child");
        expect(fanIn?.pendingParents).toBe(0);
        expect(fanIn?.jobIds).toEqual([flow.jobs.child]);
        expect(messages.some((m) => m.childRan)).toBe(false);
        expect(childRuns).toBe(1);
        expect(parentsSeen).toBe(PARENTS);
        const job = await soniq.jobs.get(flow.jobs.child as string);
        expect(job).toMatchObject({ status: "done", attempts: 1, result: "peer" });
      } finally {
        if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await soniq.close();
      }
    }, 150_000);
  },
);
