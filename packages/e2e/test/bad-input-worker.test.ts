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
    "periodic/bad-cron",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { cron: "61 * * * *", name: "p.a" }),
  ],
  [
    "periodic/bad-timezone",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { cron: "0 * * * *", timezone: "Mars/Base", name: "p.b" }),
  ],
  [
    "periodic/cron-and-every",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { cron: "0 * * * *", every: "1h", name: "p.c" } as never),
  ],
  ["periodic/neither", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.periodic(f.echo, { name: "p.d" } as never)],
  [
    "periodic/every-word",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { every: "soon", name: "p.e" }),
  ],
  [
    "periodic/duplicate-name",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.periodic(f.echo, { every: "1h", name: "bad.hourly" }),
  ],
  [
    "periodic/catch-up-unknown",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { every: "1h", name: "p.f", catchUp: "all" as never }),
  ],
  [
    "periodic/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { every: "1h", name: "p.g", bogus: 1 } as never),
  ],
  [
    "periodic/args-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(f.echo, { every: "1h", name: "p.h", args: { s: "a\u0000b" } as never }),
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

/** `periodic(job, options)`: the declaration is checked where it is written (nothing is stored yet). */
const periodic = (f: Fixture, options: unknown) => f.soniq.periodic(f.echo, options as never);

const PERIODIC: readonly Case[] = [
  ["periodic/options-missing", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, undefined)],
  ["periodic/options-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, null)],
  ["periodic/options-number", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, 5)],
  ["periodic/options-string", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, "0 * * * *")],
  ["periodic/options-array", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, [{ every: "1h" }])],
  [
    "periodic/job-missing",
    "SONIQ_INVALID_TASK_NAME",
    (f) => f.soniq.periodic(undefined as never, { every: "1h" }),
  ],
  ["periodic/job-bad-name", "SONIQ_INVALID_TASK_NAME", (f) => f.soniq.periodic("Bad Name", { every: "1h" })],
  ["periodic/name-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: "1h", name: null })],
  ["periodic/name-upper-case", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: "1h", name: "P.A" })],
  ["periodic/cron-number", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { cron: 5, name: "p.i" })],
  ["periodic/cron-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { cron: null, name: "p.j" })],
  [
    "periodic/timezone-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { cron: "0 * * * *", timezone: null, name: "p.k" }),
  ],
  [
    "periodic/timezone-with-every",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", timezone: "UTC", name: "p.l" }),
  ],
  ["periodic/every-999ms", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: 999, name: "p.m" })],
  ["periodic/every-null", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: null, name: "p.n" })],
  ["periodic/every-367d", "SONIQ_INVALID_OPTIONS", (f) => periodic(f, { every: "367d", name: "p.o" })],
  [
    "periodic/queue-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.p", queue: 5 }),
  ],
  [
    "periodic/queue-upper-case",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.q", queue: "Emails" }),
  ],
  [
    "periodic/priority-string",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.r", priority: "1" }),
  ],
  [
    "periodic/priority-2^31",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.s", priority: 2 ** 31 }),
  ],
  [
    "periodic/catch-up-within-0",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.t", catchUp: { withinMs: 0 } }),
  ],
  [
    "periodic/catch-up-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => periodic(f, { every: "1h", name: "p.u", catchUp: null }),
  ],
  [
    "periodic/args-function",
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
