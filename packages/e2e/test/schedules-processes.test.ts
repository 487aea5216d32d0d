/**
 * Three scheduler processes over one SQLite file or Postgres database, on the real clock, with an
 * every-second schedule: one job per tick, and the leader SIGKILLed mid-run loses and doubles no tick
 * (`catchUp: { withinMs }`, so a tick that falls due during the takeover still fires, late). The
 * takeover time is measured and printed; the promise is five check intervals.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { pooledPostgresKind } from "../scale/pgbouncer.js";
import { eventually, postgresKind, sqliteKind } from "./runtime-support.js";

const CHILD = fileURLToPath(new URL("./schedules-child-scheduler.ts", import.meta.url));
const CHECK_MS = 500;

interface Message {
  ready?: number;
  leader?: boolean;
  pid?: number;
  at?: number;
}

// postgres-pgbouncer: through a private PgBouncer in transaction mode (issue 24; needs Debian's pgbouncer).
describe.each([sqliteKind, postgresKind, pooledPostgresKind].map((make) => [make().name, make] as const))(
  "schedules/processes on %s",
  (name, make) => {
    it("schedules/three-processes-one-job-per-tick: a SIGKILLed leader loses and doubles no tick", async () => {
      const kind = make();
      await kind.setup();
      const admin = new Soniq({ backend: kind.create() });
      const children: ChildProcess[] = [];
      try {
        await admin.setup();
        const messages: Message[] = [];
        for (let i = 0; i < 3; i++) {
          const child = fork(CHILD, [name, kind.target(), String(CHECK_MS)], {
            execArgv: ["--conditions=source", "--import", "tsx"],
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          });
          child.on("message", (m) => messages.push(m as Message));
          children.push(child);
        }
        await eventually(() => expect(messages.filter((m) => m.ready).length).toBe(3), 45_000);
        const fired = async () => (await admin.schedules.history("proc.tick", { limit: 1000 })).length;
        await eventually(async () => expect(await fired()).toBeGreaterThanOrEqual(4), 15_000);

        const leaders = (): number[] => {
          const state = new Map<number, boolean>();
          for (const m of messages) if (m.leader !== undefined) state.set(m.pid as number, m.leader);
          return [...state].filter(([, l]) => l).map(([pid]) => pid);
        };
        const [leaderPid] = leaders();
        expect(leaders()).toHaveLength(1);
        const victim = children.find((c) => c.pid === leaderPid) as ChildProcess;
        victim.kill("SIGKILL");
        const killedAt = Date.now();
        const took = await eventually(() => {
          const next = messages.find(
            (m) => m.leader === true && m.pid !== leaderPid && (m.at ?? 0) >= killedAt,
          );
          expect(next).toBeDefined();
          return (next?.at as number) - killedAt;
        }, 15_000);
        console.log(
          `schedules/processes on ${name}: takeover ${took} ms after SIGKILL (check interval ${CHECK_MS} ms)`,
        );
        expect(took).toBeLessThanOrEqual(5 * CHECK_MS);

        const before = await fired();
        await eventually(async () => expect(await fired()).toBeGreaterThanOrEqual(before + 6), 20_000);
        for (const child of children) child.kill("SIGKILL");

        const ticks = (await admin.schedules.history("proc.tick", { limit: 1000 })).reverse();
        expect(ticks.length).toBeGreaterThanOrEqual(10);
        // No tick lost: consecutive seconds from the first to the last, every one fired.
        const gaps = ticks.slice(1).map((t, i) => t.tickAt.getTime() - (ticks[i]?.tickAt.getTime() ?? 0));
        expect(new Set(gaps)).toEqual(new Set([1000]));
        expect(ticks.every((t) => t.outcome === "fired" && t.jobId !== null)).toBe(true);
        // None doubled: one job per tick, and every job belongs to a tick.
        const jobs = await admin.jobs.list({ jobName: "proc.tick", limit: 1000 });
        expect(jobs.map((j) => j.id).sort()).toEqual(ticks.map((t) => t.jobId).sort());
      } finally {
        for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
        await admin.close();
        await kind.teardown();
      }
    }, 120_000);
  },
);
