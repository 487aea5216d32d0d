/**
 * `waitFor` from another process than the worker's: a child process runs the worker; this process enqueues
 * and waits. Postgres wakes the waiter through LISTEN on the finished channel; SQLite through the shared
 * 250 ms poll. Either way the outcome arrives within about a second of the handler returning.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";

const CHILD = fileURLToPath(new URL("./results-child-worker.ts", import.meta.url));

describe.each([sqliteKind, postgresKind].map((make) => [make().name, make] as const))(
  "results/cross-process on %s",
  (name, make) => {
    const kind = make();
    beforeAll(() => kind.setup(), 30_000);
    afterAll(() => kind.teardown(), 30_000);

    it("results/cross-process-wake-up: a waiter here hears a job finished by a worker in a child process within a second", async () => {
      const queue = uniqueName("q");
      const soniq = new Soniq({ backend: kind.create(), allowUnknownJobNames: true });
      let child: ChildProcess | undefined;
      try {
        await soniq.setup();
        child = fork(CHILD, [name, kind.target(), queue], {
          execArgv: ["--conditions=source", "--import", "tsx"],
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        });
        const messages: Record<string, unknown>[] = [];
        child.on("message", (m) => messages.push(m as Record<string, unknown>));
        await eventually(() => expect(messages.some((m) => m.ready)).toBe(true), 45_000);
        for (const n of [1, 2, 3]) {
          // By name: this process has no handler for the job, as a web server that only produces.
          const handle = await soniq.jobs.enqueue("results.child", { n }, { queue });
          const outcome = await handle.result({ timeoutMs: 10_000 });
          const resolvedAt = Date.now();
          expect(outcome).toEqual({ status: "done", result: { doubled: n * 2 } });
          const finishing = messages.find((m) => m.finishing === handle.id);
          expect(finishing).toBeDefined();
          expect(resolvedAt - (finishing?.at as number)).toBeLessThan(1000);
        }
      } finally {
        if (child && child.exitCode === null) child.kill("SIGKILL");
        await soniq.close();
      }
    }, 60_000);
  },
);
