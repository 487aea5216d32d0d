/**
 * A worker process for the durable-step production tests (steps-*.test.ts): `node --conditions=source --import
 * tsx steps-child-worker.ts <sqlite|postgres> <file-or-url> <queue> <scenario> <config json>`. It reports
 * `{ ready }` over IPC once its Soniq exists; with `config.startOn: "message"` its worker starts only when the
 * parent sends `{ start: true }` (so a process can boot early and claim late), else at once. `{ stop: true }`
 * stops the worker gracefully and exits. Every side effect a handler makes is one JSON line appended to
 * `config.effects` (appendFileSync: on disk before anything after it, a SIGKILL loses none).
 *
 * Scenarios (the job names the tests enqueue):
 * - `kill` (`steps.kill`): steps a, b, c, each appending its side effect; `config.killAt` `in:<step>` reports
 *   `{ killPoint }` after that step's side effect, before its checkpoint, and hangs; `after:<step>` reports
 *   once the step is checkpointed, before the next one, and hangs. The parent SIGKILLs the process there.
 * - `hold` (`steps.hold`, SQLite): a transactional step `charge` inserts into `app_orders` through tx, writes
 *   `config.marker`, then holds its BEGIN IMMEDIATE (synchronously, as a SQLite step must) until the file
 *   `config.gate` exists; once committed it reports `{ committed }` and waits for `{ go: jobId }` before the
 *   next step `ship`, and reports what that step threw as `{ shipError }`.
 * - `sleeper` (`steps.nap`): step `before`, `ctx.sleep("nap", config.sleepMs)`, then an `after` effect.
 * - `waiter` (`steps.wait_go`): `ctx.waitForSignal("go", { timeoutMs: 600_000 })`, then a `got` effect; it
 *   returns `{ n, got }`.
 */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { isSoniqError, Soniq } from "@soniq/core";
import type Database from "better-sqlite3";

interface Config {
  effects: string;
  startOn?: "message";
  killAt?: string;
  marker?: string;
  gate?: string;
  sleepMs?: number;
  concurrency?: number;
  staleAfterMs?: number;
}

const [kind, target, queue, scenario, rawConfig] = process.argv.slice(2) as [
  "sqlite" | "postgres",
  string,
  string,
  "kill" | "hold" | "sleeper" | "waiter",
  string,
];
const config = JSON.parse(rawConfig) as Config;
// Only the backend in use is loaded: a child boots in seconds on a busy 2-core machine, half of it imports.
const backend =
  kind === "sqlite"
    ? (await import("@soniq/backend-sqlite")).sqliteBackend({ filename: target })
    : (await import("@soniq/backend-postgres")).postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend });
const send = (message: Record<string, unknown>) => process.send?.(message);
const effect = (record: Record<string, unknown>) =>
  appendFileSync(config.effects, `${JSON.stringify({ ...record, pid: process.pid, at: Date.now() })}\n`);
const hang = () => new Promise<never>(() => {});
const messages: Record<string, unknown>[] = [];
const listeners = new Set<() => void>();
process.on("message", (m) => {
  messages.push(m as Record<string, unknown>);
  for (const listener of listeners) listener();
});
/** Resolves with the first message (already received or to come) that `match` accepts. */
function message(match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const check = () => {
      const found = messages.find(match);
      if (!found) return;
      listeners.delete(check);
      resolve(found);
    };
    listeners.add(check);
    check();
  });
}

if (scenario === "kill") {
  soniq.job(
    "steps.kill",
    async (_args: Record<string, never>, ctx) => {
      for (const step of ["a", "b", "c"]) {
        await ctx.step(step, async () => {
          effect({ job: ctx.jobId, step, attempt: ctx.attempt });
          if (config.killAt === `in:${step}`) {
            send({ killPoint: config.killAt, job: ctx.jobId, attempt: ctx.attempt });
            await hang();
          }
          return `${step}@${ctx.attempt}`;
        });
        if (config.killAt === `after:${step}`) {
          send({ killPoint: config.killAt, job: ctx.jobId, attempt: ctx.attempt });
          await hang();
        }
      }
      return { finishedBy: process.pid, attempt: ctx.attempt };
    },
    { queue, maxAttempts: 5 },
  );
} else if (scenario === "hold") {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  soniq.job(
    "steps.hold",
    async (_args: Record<string, never>, ctx) => {
      await ctx.step("charge", { transaction: true }, (tx) => {
        (tx as Database.Database).prepare("INSERT INTO app_orders (job_id) VALUES (?)").run(ctx.jobId);
        writeFileSync(config.marker as string, ctx.jobId);
        // A SQLite transactional step is synchronous: hold BEGIN IMMEDIATE until the parent opens the gate.
        while (!existsSync(config.gate as string)) Atomics.wait(pause, 0, 0, 5);
        return "charged";
      });
      send({ committed: ctx.jobId });
      await message((m) => m.go === ctx.jobId);
      try {
        await ctx.step("ship", () => "shipped");
        send({ shipError: null });
      } catch (err) {
        send({ shipError: isSoniqError(err) ? err.code : String(err) });
        throw err;
      }
      return "shipped";
    },
    { queue },
  );
} else if (scenario === "sleeper") {
  soniq.job(
    "steps.nap",
    async (_args: Record<string, never>, ctx) => {
      await ctx.step("before", () => {
        effect({ job: ctx.jobId, step: "before", attempt: ctx.attempt });
        return process.pid;
      });
      await ctx.sleep("nap", config.sleepMs as number);
      effect({ job: ctx.jobId, step: "after", attempt: ctx.attempt });
      return { resumedBy: process.pid };
    },
    { queue },
  );
} else {
  soniq.job(
    "steps.wait_go",
    async (args: { n: number }, ctx) => {
      const got = await ctx.waitForSignal<{ n: number }>("go", { timeoutMs: 600_000 });
      effect({ job: ctx.jobId, n: args.n, got, attempt: ctx.attempt });
      return { n: args.n, got };
    },
    { queue },
  );
}

const worker = soniq.worker({
  queues: [queue],
  concurrency: config.concurrency ?? 1,
  pollIntervalMs: 50,
  heartbeatIntervalMs: 100,
  staleAfterMs: config.staleAfterMs ?? 120_000,
  maintenanceIntervalMs: 100,
  shutdownTimeoutMs: 5_000,
});
process.on("message", (m) => {
  if ((m as { stop?: boolean }).stop !== true) return;
  void worker
    .stop()
    .then(() => soniq.close())
    .then(() => {
      send({ stopped: worker.id });
      process.exit(0);
    });
});
if (config.startOn === "message") {
  // Nothing else holds this process open until the worker starts (SQLite has no socket).
  const keepAlive = setInterval(() => {}, 60_000);
  send({ ready: worker.id });
  await message((m) => m.start === true);
  clearInterval(keepAlive);
  await worker.start();
  send({ started: worker.id });
} else {
  await worker.start();
  send({ ready: worker.id });
}
