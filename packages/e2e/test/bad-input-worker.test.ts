/**
 * The bad-input catalogue (see bad-input-support.ts): `worker()` and `runOnce`, recurring job declarations
 * (`periodic`), `soniq.schedules` and `scheduler()`.
 */
import { type Case, catalogue, type Fixture } from "./bad-input-support.js";

const CASES: readonly Case[] = [
  ["worker/unknown-option", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker({ bogus: 1 } as never)],
  [
    "worker/concurrency-string",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.worker({ concurrency: "2" as never }),
  ],
  [
    "worker/heartbeat-above-stale",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.worker({ heartbeatIntervalMs: 2000, staleAfterMs: 1000 }),
  ],
  [
    "runOnce/max-jobs-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.worker().runOnce({ maxJobs: "5" as never }),
  ],
  ["runOnce/null", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker().runOnce(null as never)],
  [
    "runOnce/max-jobs-null",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.worker().runOnce({ maxJobs: null as never }),
  ],
  ["runOnce/options-array", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker().runOnce([] as never)],
  ["runOnce/unknown-option", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker().runOnce({ max: 5 } as never)],
  ["worker/options-number", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker(5 as never)],
  ["worker/queues-empty", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker({ queues: [] })],
  [
    "schedules.declare/bad-cron",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { cron: "61 * * * *", name: "p.a" }),
  ],
  [
    "schedules.declare/bad-timezone",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { cron: "0 * * * *", timezone: "Mars/Base", name: "p.b" }),
  ],
  [
    "schedules.declare/cron-and-every",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { cron: "0 * * * *", every: "1h", name: "p.c" } as never),
  ],
  [
    "schedules.declare/neither",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { name: "p.d" } as never),
  ],
  [
    "schedules.declare/every-word",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { every: "soon", name: "p.e" }),
  ],
  [
    "schedules.declare/duplicate-name",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.schedules.declare(f.echo, { every: "1h", name: "bad.hourly" }),
  ],
  [
    "schedules.declare/catch-up-unknown",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { every: "1h", name: "p.f", catchUp: "all" as never }),
  ],
  [
    "schedules.declare/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { every: "1h", name: "p.g", bogus: 1 } as never),
  ],
  [
    "schedules.declare/args-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.schedules.declare(f.echo, { every: "1h", name: "p.h", args: { s: "a\u0000b" } as never }),
  ],
  ["schedules.get/number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.get(5 as never)],
  ["schedules.pause/empty", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.pause("")],
  [
    "schedules.history/limit-0",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.schedules.history("bad.hourly", { limit: 0 }),
  ],
  ["schedules.upcoming/zero", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.upcoming("bad.hourly", 0)],
  [
    "schedules.upcoming/string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.schedules.upcoming("bad.hourly", "5" as never),
  ],
  ["schedules.trigger/unknown", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.trigger("nope.nope")],
  ["scheduler/interval-negative", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.scheduler({ checkIntervalMs: -1 })],
  ["scheduler/unknown-option", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.scheduler({ bogus: 1 } as never)],
  ["worker/schedules-number", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker({ schedules: 5 as never })],
  ["worker/options-null", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker(null as never)],
  ["worker/options-array", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker([] as never)],
  ["scheduler/options-null", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.scheduler(null as never)],
  ["scheduler/options-number", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.scheduler(5 as never)],
];

/** `schedules.declare(job, options)`: the declaration is checked where it is written (nothing is stored yet). */
const periodic = (f: Fixture, options: unknown) => f.soniq.schedules.declare(f.echo, options as never);

const PERIODIC: readonly Case[] = [
  ["schedules.declare/options-missing", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, undefined)],
  ["schedules.declare/options-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, null)],
  ["schedules.declare/options-number", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, 5)],
  ["schedules.declare/options-string", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, "0 * * * *")],
  ["schedules.declare/options-array", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, [{ every: "1h" }])],
  [
    "schedules.declare/job-missing",
    "SONIQ_INVALID_TASK_NAME",
    (f) => f.soniq.schedules.declare(undefined as never, { every: "1h" }),
  ],
  [
    "schedules.declare/job-bad-name",
    "SONIQ_INVALID_TASK_NAME",
    (f) => f.soniq.schedules.declare("Bad Name", { every: "1h" }),
  ],
  ["schedules.declare/name-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: "1h", name: null })],
  [
    "schedules.declare/name-upper-case",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "P.A" }),
  ],
  ["schedules.declare/cron-number", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { cron: 5, name: "p.i" })],
  ["schedules.declare/cron-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { cron: null, name: "p.j" })],
  [
    "schedules.declare/timezone-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { cron: "0 * * * *", timezone: null, name: "p.k" }),
  ],
  [
    "schedules.declare/timezone-with-every",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", timezone: "UTC", name: "p.l" }),
  ],
  ["schedules.declare/every-999ms", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: 999, name: "p.m" })],
  ["schedules.declare/every-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: null, name: "p.n" })],
  [
    "schedules.declare/every-367d",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "367d", name: "p.o" }),
  ],
  [
    "schedules.declare/queue-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.p", queue: 5 }),
  ],
  [
    "schedules.declare/queue-upper-case",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.q", queue: "Emails" }),
  ],
  [
    "schedules.declare/priority-string",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.r", priority: "1" }),
  ],
  [
    "schedules.declare/priority-2^31",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.s", priority: 2 ** 31 }),
  ],
  [
    "schedules.declare/catch-up-within-0",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.t", catchUp: { withinMs: 0 } }),
  ],
  [
    "schedules.declare/catch-up-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.u", catchUp: null }),
  ],
  [
    "schedules.declare/args-function",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.v", args: { f: () => 1 } }),
  ],
];

const history = (f: Fixture, options: unknown) => f.soniq.schedules.history("bad.hourly", options as never);
const upcoming = (f: Fixture, count: unknown) => f.soniq.schedules.upcoming("bad.hourly", count as never);

/** `soniq.schedules`: names are SONIQ_INVALID_ARGUMENT, as are `upcoming`'s count and `history`'s limit. */
const SCHEDULES: readonly Case[] = [
  [
    "schedules.list/argument",
    "SONIQ_INVALID_ARGUMENT",
    (f) => (f.soniq.schedules.list as (arg: unknown) => unknown).call(f.soniq.schedules, { paused: true }),
  ],
  [
    "schedules.list/argument-null",
    "SONIQ_INVALID_ARGUMENT",
    (f) => (f.soniq.schedules.list as (arg: unknown) => unknown).call(f.soniq.schedules, null),
  ],
  ["schedules.get/missing", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.get(undefined as never)],
  ["schedules.get/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.get(null as never)],
  ["schedules.get/201-chars", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.get("s".repeat(201))],
  ["schedules.pause/number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.pause(5 as never)],
  ["schedules.resume/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.resume(null as never)],
  ["schedules.resume/empty", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.resume("")],
  ["schedules.remove/missing", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.remove(undefined as never)],
  ["schedules.remove/object", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.remove({} as never)],
  ["schedules.trigger/empty", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.trigger("")],
  ["schedules.trigger/number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.trigger(5 as never)],
  [
    "schedules.upcoming/name-missing",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.schedules.upcoming(undefined as never),
  ],
  ["schedules.upcoming/unknown", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.upcoming("nope.nope")],
  ["schedules.upcoming/null", "SONIQ_INVALID_ARGUMENT", (f) => upcoming(f, null)],
  ["schedules.upcoming/negative", "SONIQ_INVALID_ARGUMENT", (f) => upcoming(f, -1)],
  ["schedules.upcoming/fraction", "SONIQ_INVALID_ARGUMENT", (f) => upcoming(f, 2.5)],
  ["schedules.upcoming/1001", "SONIQ_INVALID_ARGUMENT", (f) => upcoming(f, 1001)],
  ["schedules.upcoming/nan", "SONIQ_INVALID_ARGUMENT", (f) => upcoming(f, Number.NaN)],
  ["schedules.upcoming/object", "SONIQ_INVALID_ARGUMENT", (f) => upcoming(f, { count: 5 })],
  [
    "schedules.history/name-missing",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.schedules.history(undefined as never),
  ],
  ["schedules.history/name-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.schedules.history(5 as never)],
  ["schedules.history/options-null", "SONIQ_INVALID_OPTIONS", (f) => history(f, null)],
  ["schedules.history/options-number", "SONIQ_INVALID_OPTIONS", (f) => history(f, 5)],
  ["schedules.history/options-string", "SONIQ_INVALID_OPTIONS", (f) => history(f, "10")],
  ["schedules.history/options-array", "SONIQ_INVALID_OPTIONS", (f) => history(f, [10])],
  ["schedules.history/unknown-option", "SONIQ_INVALID_OPTIONS", (f) => history(f, { bogus: 1 })],
  ["schedules.history/misspelt-limit", "SONIQ_INVALID_OPTIONS", (f) => history(f, { limt: 10 })],
  ["schedules.history/limit-null", "SONIQ_INVALID_ARGUMENT", (f) => history(f, { limit: null })],
  ["schedules.history/limit-string", "SONIQ_INVALID_ARGUMENT", (f) => history(f, { limit: "10" })],
  ["schedules.history/limit-fraction", "SONIQ_INVALID_ARGUMENT", (f) => history(f, { limit: 1.5 })],
  ["schedules.history/limit-1001", "SONIQ_INVALID_ARGUMENT", (f) => history(f, { limit: 1001 })],
];

catalogue("workers and schedules", [...CASES, ...PERIODIC, ...SCHEDULES]);
