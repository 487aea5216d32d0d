/**
 * The bad-input catalogue (see bad-input-support.ts): the queue controls (`soniq.queues`), the audit log,
 * the persisted metrics, and the `{ actor }` options argument that every operator write takes last.
 */
import { type Case, catalogue, type Fixture } from "./bad-input-support.js";

const BEFORE_YEAR_1 = new Date(Date.UTC(-10_000, 0, 1));
const configure = (f: Fixture, config: unknown) => f.soniq.queues.configure("q.bad", config as never);
const rate = (f: Fixture, rateLimit: unknown) => configure(f, { rateLimit });

const QUEUES: readonly Case[] = [
  ["queues.pause/empty", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.pause("")],
  ["queues.pause/missing", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.pause(undefined as never)],
  ["queues.pause/number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.pause(5 as never)],
  ["queues.pause/upper-case", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.pause("Emails")],
  ["queues.pause/nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.pause("q\u0000")],
  ["queues.pause/256-chars", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.pause("q".repeat(256))],
  ["queues.resume/space", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.resume("a b")],
  ["queues.resume/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.resume(null as never)],
  ["queues.configure/bad-name", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.configure("Q", {})],
  ["queues.configure/config-null", "SONIQ_INVALID_ARGUMENT", (f) => configure(f, null)],
  ["queues.configure/config-missing", "SONIQ_INVALID_ARGUMENT", (f) => configure(f, undefined)],
  ["queues.configure/config-array", "SONIQ_INVALID_ARGUMENT", (f) => configure(f, [])],
  ["queues.configure/config-number", "SONIQ_INVALID_ARGUMENT", (f) => configure(f, 5)],
  ["queues.configure/unknown-key", "SONIQ_INVALID_ARGUMENT", (f) => configure(f, { concurency: 2 })],
  ["queues.configure/concurrency-0", "SONIQ_INVALID_ARGUMENT", (f) => configure(f, { concurrency: 0 })],
  [
    "queues.configure/concurrency-negative",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { concurrency: -1 }),
  ],
  [
    "queues.configure/concurrency-fraction",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { concurrency: 1.5 }),
  ],
  [
    "queues.configure/concurrency-2^31",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { concurrency: 2 ** 31 }),
  ],
  [
    "queues.configure/concurrency-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { concurrency: "5" }),
  ],
  [
    "queues.configure/concurrency-nan",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { concurrency: Number.NaN }),
  ],
  [
    "queues.configure/concurrency-infinity",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { concurrency: Number.POSITIVE_INFINITY }),
  ],
  [
    "queues.configure/group-concurrency-0",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { groupConcurrency: 0 }),
  ],
  [
    "queues.configure/group-concurrency-boolean",
    "SONIQ_INVALID_ARGUMENT",
    (f) => configure(f, { groupConcurrency: true }),
  ],
  ["queues.configure/rate-limit-number", "SONIQ_INVALID_ARGUMENT", (f) => rate(f, 100)],
  ["queues.configure/rate-limit-array", "SONIQ_INVALID_ARGUMENT", (f) => rate(f, [100, 1000])],
  ["queues.configure/rate-limit-empty", "SONIQ_INVALID_ARGUMENT", (f) => rate(f, {})],
  ["queues.configure/rate-limit-max-only", "SONIQ_INVALID_ARGUMENT", (f) => rate(f, { max: 5 })],
  ["queues.configure/rate-limit-per-only", "SONIQ_INVALID_ARGUMENT", (f) => rate(f, { perMs: 1000 })],
  [
    "queues.configure/rate-limit-max-null",
    "SONIQ_INVALID_ARGUMENT",
    (f) => rate(f, { max: null, perMs: 1000 }),
  ],
  [
    "queues.configure/rate-limit-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => rate(f, { max: 1, perMs: 1, per: 1 }),
  ],
  ["queues.configure/rate-limit-max-0", "SONIQ_INVALID_ARGUMENT", (f) => rate(f, { max: 0, perMs: 1000 })],
  [
    "queues.configure/rate-limit-per-1e300",
    "SONIQ_INVALID_ARGUMENT",
    (f) => rate(f, { max: 1, perMs: 1e300 }),
  ],
  [
    "queues.configure/rate-limit-per-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => rate(f, { max: 1, perMs: "1s" }),
  ],
  ["queues.get/number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.get(5 as never)],
  ["queues.get/missing", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.get(undefined as never)],
  ["queues.get/nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.get("q\u0000")],
  ["queues.get/upper-case", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.queues.get("Default")],
  [
    "queues.list/argument",
    "SONIQ_INVALID_ARGUMENT",
    (f) => (f.soniq.queues.list as (filter: unknown) => unknown).call(f.soniq.queues, { queue: "x" }),
  ],
];

const READS: readonly Case[] = [
  ["audit.list/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list(null as never)],
  ["audit.list/array", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list([] as never)],
  ["audit.list/unknown-key", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ actor: "ops" } as never)],
  ["audit.list/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ limit: 0 })],
  ["audit.list/limit-negative", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ limit: -5 })],
  ["audit.list/limit-fraction", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ limit: 2.5 })],
  [
    "audit.list/limit-infinity",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.audit.list({ limit: Number.POSITIVE_INFINITY }),
  ],
  ["audit.list/limit-string", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ limit: "10" as never })],
  [
    "audit.list/action-unknown",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.audit.list({ action: "queue.paused" as never }),
  ],
  ["audit.list/action-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ action: 5 as never })],
  [
    "audit.list/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.audit.list({ since: "yesterday" as never }),
  ],
  ["audit.list/since-invalid", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.audit.list({ since: new Date("x") })],
  [
    "audit.list/since-before-year-1",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.audit.list({ since: BEFORE_YEAR_1 }),
  ],
  ["metrics.series/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.metrics.series(null as never)],
  [
    "metrics.series/unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ jobName: "x" } as never),
  ],
  ["metrics.series/bucket-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.metrics.series({ bucketMs: 0 })],
  [
    "metrics.series/bucket-negative",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ bucketMs: -60_000 }),
  ],
  ["metrics.series/bucket-1s", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.metrics.series({ bucketMs: 1000 })],
  [
    "metrics.series/bucket-90s",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ bucketMs: 90_000 }),
  ],
  [
    "metrics.series/bucket-1e300",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ bucketMs: 1e300 }),
  ],
  [
    "metrics.series/bucket-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ bucketMs: "60000" as never }),
  ],
  [
    "metrics.series/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ since: "1h" as never }),
  ],
  [
    "metrics.series/since-invalid",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ since: new Date(Number.NaN) }),
  ],
  [
    "metrics.series/since-before-year-1",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ since: BEFORE_YEAR_1 }),
  ],
  [
    "metrics.series/queue-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.metrics.series({ queue: 5 as never }),
  ],
  ["metrics.series/queue-empty", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.metrics.series({ queue: "" })],
  ["metrics.series/queue-nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.metrics.series({ queue: "q\u0000" })],
];

/** Every operator write, called with `options` as its last argument (each would write if it got through). */
const WRITES: readonly [name: string, call: (f: Fixture, options: unknown) => unknown][] = [
  ["jobs.cancel", (f, o) => f.soniq.jobs.cancel(f.jobId, o as never)],
  ["deadLetters.replay", (f, o) => f.soniq.deadLetters.replay(f.deadId, o as never)],
  ["deadLetters.purge", (f, o) => f.soniq.deadLetters.purge(f.deadId, o as never)],
  ["deadLetters.replayWhere", (f, o) => f.soniq.deadLetters.replayWhere({}, o as never)],
  ["deadLetters.purgeWhere", (f, o) => f.soniq.deadLetters.purgeWhere({}, o as never)],
  ["queues.pause", (f, o) => f.soniq.queues.pause("q.bad", o as never)],
  ["queues.resume", (f, o) => f.soniq.queues.resume("q.bad", o as never)],
  ["queues.configure", (f, o) => f.soniq.queues.configure("q.bad", { concurrency: 2 }, o as never)],
  ["schedules.pause", (f, o) => f.soniq.schedules.pause("bad.hourly", o as never)],
  ["schedules.resume", (f, o) => f.soniq.schedules.resume("bad.hourly", o as never)],
  ["schedules.remove", (f, o) => f.soniq.schedules.remove("bad.hourly", o as never)],
  ["schedules.trigger", (f, o) => f.soniq.schedules.trigger("bad.hourly", o as never)],
];

/** Bad `{ actor }` options: the shape is SONIQ_INVALID_OPTIONS, the actor's value SONIQ_INVALID_ARGUMENT. */
const BAD_ACTOR_OPTIONS: readonly [what: string, code: string, options: unknown][] = [
  ["options-number", "SONIQ_INVALID_OPTIONS", 5],
  ["options-null", "SONIQ_INVALID_OPTIONS", null],
  ["options-array", "SONIQ_INVALID_OPTIONS", ["ops"]],
  ["options-unknown-key", "SONIQ_INVALID_OPTIONS", { actr: "ops" }],
  ["actor-empty", "SONIQ_INVALID_ARGUMENT", { actor: "" }],
  ["actor-number", "SONIQ_INVALID_ARGUMENT", { actor: 42 }],
  ["actor-201-chars", "SONIQ_INVALID_ARGUMENT", { actor: "a".repeat(201) }],
  ["actor-nul", "SONIQ_INVALID_ARGUMENT", { actor: "ops\u0000" }],
  ["actor-lone-surrogate", "SONIQ_INVALID_ARGUMENT", { actor: "ops\ud800" }],
];

const ACTORS: Case[] = WRITES.flatMap(([name, call]) =>
  BAD_ACTOR_OPTIONS.map(([what, code, options]): Case => [`${name}/${what}`, code, (f) => call(f, options)]),
);

catalogue("operator", [...QUEUES, ...READS, ...ACTORS]);
