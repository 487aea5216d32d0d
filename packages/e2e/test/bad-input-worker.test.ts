/**
 * The bad-input catalogue (see bad-input-support.ts): `worker()` and `runOnce`, recurring job declarations
 * (`periodic`), `soniq.schedules` and `scheduler()`.
 */
import { type Case, catalogue } from "./bad-input-support.js";

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
];

catalogue("workers and schedules", CASES);
