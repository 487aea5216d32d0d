/**
 * The bad-input catalogue: every public entry point of Soniq, fed wrong input, on every backend. Each case
 * asserts the SoniqError code (never a raw TypeError, RangeError or driver error) and that nothing was
 * written (jobs, dead letters and workers counted before and after).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { type Backend, isSoniqError, Soniq, snooze } from "@soniq/core";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_KINDS } from "./runtime-support.js";

interface Fixture {
  soniq: Soniq;
  /** A queued job's id and a dead-letter row's id. */
  jobId: string;
  deadId: string;
  /** `bad.echo`'s definition, with one schedule (`bad.hourly`) declared for it. */
  echo?: ReturnType<Soniq["job"]>;
}

type Case = readonly [id: string, code: string, call: (f: Fixture) => unknown];

const deep = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

const CASES: readonly Case[] = [
  [
    "ctor/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => new Soniq({ backend: f.soniq.backend, bogus: 1 } as never),
  ],
  ["ctor/null", "SONIQ_INVALID_OPTIONS", () => new Soniq(null as never)],
  ["job/bad-name", "SONIQ_INVALID_TASK_NAME", (f) => f.soniq.job("Bad Name", async () => 1)],
  ["job/no-handler", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.job("bad.nohandler", 5 as never)],
  [
    "job/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.job("bad.opt", async () => 1, { bogus: 1 } as never),
  ],
  ["enqueue/unknown-name", "SONIQ_UNKNOWN_TASK_NAME", (f) => f.soniq.enqueue("bad.missing", {})],
  ["enqueue/options-number", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.enqueue("bad.echo", {}, 42 as never)],
  [
    "enqueue/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { bogus: 1 } as never),
  ],
  ["enqueue/args-deep", "SONIQ_TASK_ARGS_INVALID", (f) => f.soniq.enqueue("bad.echo", deep(100_000))],
  ["enqueue/args-nul", "SONIQ_TASK_ARGS_INVALID", (f) => f.soniq.enqueue("bad.echo", { s: "a\u0000b" })],
  [
    "enqueue/args-lone-surrogate",
    "SONIQ_TASK_ARGS_INVALID",
    (f) => f.soniq.enqueue("bad.echo", { s: "\ud800" }),
  ],
  ["enqueue/args-bigint", "SONIQ_TASK_ARGS_INVALID", (f) => f.soniq.enqueue("bad.echo", { n: 1n })],
  [
    "enqueue/dedup-10kb",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { dedupKey: "k".repeat(10_000) }),
  ],
  [
    "enqueue/dedup-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { dedupKey: "a\u0000" }),
  ],
  [
    "enqueue/run-at-year-300000",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { runAt: new Date("+300000-01-01T00:00:00Z") }),
  ],
  [
    "enqueue/run-at-year-200000",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { runAt: new Date(Date.UTC(200_000, 0, 1)) }),
  ],
  [
    "enqueue/run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { runAt: new Date("nope") }),
  ],
  [
    "enqueue/delay-negative",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { delayMs: -1 }),
  ],
  [
    "enqueue/priority-string",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { priority: "1" as never }),
  ],
  ["enqueueMany/not-array", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.enqueueMany(null as never)],
  [
    "enqueueMany/unknown-call-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueueMany([{ job: "bad.echo", args: {} }], { bogus: 1 } as never),
  ],
  [
    "enqueueMany/call-options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueueMany([{ job: "bad.echo", args: {} }], 42 as never),
  ],
  [
    "enqueueMany/item-tx",
    "SONIQ_INVALID_ARGUMENT",
    (f) =>
      f.soniq.enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: {}, options: { tx: {} } as never },
      ]),
  ],
  [
    "enqueueMany/item-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.enqueueMany([{ job: "bad.echo", args: {}, bogus: 1 } as never]),
  ],
  ["enqueueMany/item-null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.enqueueMany([null as never])],
  [
    "enqueueMany/second-item-bad-args",
    "SONIQ_TASK_ARGS_INVALID",
    (f) =>
      f.soniq.enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: { n: Number.NaN } },
      ]),
  ],
  [
    "listJobs/statuses-typo",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.listJobs({ statuses: ["queued"] } as never),
  ],
  ["listJobs/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs(null as never)],
  [
    "listJobs/status-unknown",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.listJobs({ status: "running" as never }),
  ],
  ["listJobs/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ limit: 0 })],
  ["listJobs/limit-string", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ limit: "5" as never })],
  ["listJobs/offset-negative", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ offset: -1 })],
  ["listJobs/queue-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ queue: 5 as never })],
  ["getQueueStats/unknown-key", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.getQueueStats({ q: "x" } as never)],
  [
    "getQueueStats/queue-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.getQueueStats({ queue: 5 as never }),
  ],
  [
    "deadLetter.list/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ since: "yesterday" as never }),
  ],
  [
    "deadLetter.list/until-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ until: 5 as never }),
  ],
  ["deadLetter.list/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.list({ limit: 0 })],
  [
    "deadLetter.list/unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ name: "x" } as never),
  ],
  [
    "deadLetter.export/since-string",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.export({ since: "yesterday" as never }),
  ],
  [
    "deadLetter.replay/dedup-key",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { dedupKey: "x" } as never),
  ],
  [
    "deadLetter.replay/unique",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { unique: true } as never),
  ],
  [
    "deadLetter.replay/tx",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { tx: {} } as never),
  ],
  [
    "deadLetter.replay/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, 5 as never),
  ],
  [
    "deadLetter.replay/run-at-and-delay",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { runAt: new Date(), delayMs: 5 }),
  ],
  [
    "deadLetter.replay/run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { runAt: new Date("x") }),
  ],
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
  ["enqueue/name-nul", "SONIQ_INVALID_TASK_NAME", (f) => f.soniq.enqueue("bad.\u0000", {})],
  [
    "enqueue/queue-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { queue: "q\u0000" }),
  ],
  ["enqueue/queue-empty", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.enqueue("bad.echo", {}, { queue: "" })],
  [
    "enqueue/priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.enqueue("bad.echo", {}, { priority: 1.5 }),
  ],
  ["getQueueStats/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.getQueueStats(null as never)],
  ["deadLetter.list/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.list(null as never)],
  [
    "deadLetter.list/since-invalid-date",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.deadLetter.list({ since: new Date("x") }),
  ],
  ["deadLetter.export/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.deadLetter.export(null as never)],
  [
    "deadLetter.replay/queue-empty",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { queue: "" }),
  ],
  [
    "deadLetter.replay/priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.deadLetter.replay(f.deadId, { priority: 1.5 }),
  ],
  [
    "job/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.job("bad.optnum", async () => 1, 5 as never),
  ],
  ["worker/options-number", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker(5 as never)],
  ["worker/queues-empty", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.worker({ queues: [] })],
  ["snooze/negative", "SONIQ_INVALID_ARGUMENT", () => snooze(-1)],
  ["snooze/nan", "SONIQ_INVALID_ARGUMENT", () => snooze(Number.NaN)],
  // Recurring jobs: declarations are checked at once; the schedule service checks names and counts.
  [
    "periodic/bad-cron",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { cron: "61 * * * *", name: "p.a" }),
  ],
  [
    "periodic/bad-timezone",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { cron: "0 * * * *", timezone: "Mars/Base", name: "p.b" }),
  ],
  [
    "periodic/cron-and-every",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { cron: "0 * * * *", every: "1h", name: "p.c" } as never),
  ],
  ["periodic/neither", "SONIQ_INVALID_OPTIONS", (f) => f.soniq.periodic(echo(f), { name: "p.d" } as never)],
  [
    "periodic/every-word",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { every: "soon", name: "p.e" }),
  ],
  [
    "periodic/duplicate-name",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.periodic(echo(f), { every: "1h", name: "bad.hourly" }),
  ],
  [
    "periodic/catch-up-unknown",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { every: "1h", name: "p.f", catchUp: "all" as never }),
  ],
  [
    "periodic/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { every: "1h", name: "p.g", bogus: 1 } as never),
  ],
  [
    "periodic/args-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.periodic(echo(f), { every: "1h", name: "p.h", args: { s: "a\u0000b" } as never }),
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

/** The fixture's job definition, for `periodic()`. */
function echo(f: Fixture) {
  const def = f.echo;
  if (!def) throw new Error("the fixture has no bad.echo definition");
  return def;
}

/** What a bad call must not change. */
async function footprint(soniq: Soniq): Promise<unknown> {
  const stats = await soniq.getQueueStats();
  const dead = await soniq.deadLetter.list({ limit: 1000 });
  const workers = await soniq.backend.workers.list();
  return { stats, dead: dead.map((d) => [d.id, d.resurrectionCount]), workers: workers.length };
}

async function codeOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (err) {
    if (isSoniqError(err)) return err.code;
    return `not a SoniqError: ${String(err)}`;
  }
  return "no error";
}

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))("bad-input on %s", (_name, make) => {
  const kind = make();
  let f: Fixture;

  beforeAll(async () => {
    await kind.setup();
    const soniq = new Soniq({ backend: kind.create() as Backend<unknown> });
    await soniq.setup();
    const echoDef = soniq.job("bad.echo", async (args: unknown) => args);
    soniq.periodic(echoDef, { every: "1h", name: "bad.hourly" });
    soniq.job(
      "bad.dead",
      async () => {
        throw new Error("to the dead-letter table");
      },
      { maxAttempts: 1 },
    );
    const { id: deadId } = await soniq.enqueue("bad.dead", {});
    await soniq.worker().runOnce();
    const { id: jobId } = await soniq.enqueue("bad.echo", { n: 1 });
    f = { soniq, jobId, deadId, echo: echoDef };
  }, 30_000);
  afterAll(async () => {
    await f?.soniq.close();
    await kind.teardown();
  }, 30_000);

  it.each(CASES.map((c) => [c[0], c[1], c[2]] as const))(
    "bad-input/%s -> %s, nothing written",
    async (_id, code, call) => {
      const before = await footprint(f.soniq);
      expect(await codeOf(() => call(f))).toBe(code);
      expect(await footprint(f.soniq)).toEqual(before);
    },
  );

  it("bad-input/item-index-named: the failing enqueueMany item is named by its index", async () => {
    const err = await f.soniq
      .enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: {}, options: { tx: {} } as never },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "SONIQ_INVALID_ARGUMENT", context: { index: 1, key: "tx" } });
  });

  it("bad-input/upper-case-uuid: an upper-case id finds the same rows", async () => {
    expect((await f.soniq.getJob(f.jobId.toUpperCase()))?.id).toBe(f.jobId);
    expect((await f.soniq.deadLetter.get(f.deadId.toUpperCase()))?.id).toBe(f.deadId);
    expect(await f.soniq.getResult(f.jobId.toUpperCase())).toBeNull();
  });

  it("bad-input/not-an-id: ids that are not UUIDs name no row (null/false), without a driver error", async () => {
    for (const id of ["", "nope", "\u0000", 42, null, "x".repeat(10_000)] as never[]) {
      expect(await f.soniq.getJob(id)).toBeNull();
      expect(await f.soniq.getResult(id)).toBeNull();
      expect(await f.soniq.cancelJob(id)).toBe(false);
      expect(await f.soniq.deadLetter.get(id)).toBeNull();
      expect(await f.soniq.deadLetter.replay(id)).toBeNull();
      expect(await f.soniq.deadLetter.purge(id)).toBe(false);
    }
  });

  it("bad-input/args-depth-limit: 256 levels are stored, 257 are refused", async () => {
    const ok = await f.soniq.enqueue("bad.echo", deep(255));
    expect((await f.soniq.getJob(ok.id))?.status).toBe("queued");
    expect(await f.soniq.cancelJob(ok.id)).toBe(true);
    expect(await codeOf(() => f.soniq.enqueue("bad.echo", deep(257)))).toBe("SONIQ_TASK_ARGS_INVALID");
  });

  it("bad-input/replay-options: delayMs, queue and priority apply to the new job", async () => {
    const newId = await f.soniq.deadLetter.replay(f.deadId, {
      delayMs: 3_600_000,
      queue: "later",
      priority: 7,
    });
    const job = await f.soniq.getJob(newId as string);
    expect(job).toMatchObject({ status: "queued", queue: "later", priority: 7 });
    expect(job?.scheduledAt?.getTime() ?? 0).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await f.soniq.cancelJob(newId as string)).toBe(true);
  });
});

describe("bad-input/sqlite-foreign-tx", () => {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "soniq-bad-tx-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("bad-input/sqlite-tx-other-file: a Database on another file is refused; nothing lands in either file", async () => {
    const own = new Database(join(dir, "own.db"));
    const other = new Database(join(dir, "other.db"));
    const soniq = new Soniq({ backend: sqliteBackend({ database: own }) });
    try {
      await soniq.setup();
      soniq.job("bad.echo", async () => 1);
      expect(await codeOf(() => soniq.enqueue("bad.echo", {}, { tx: other }))).toBe(
        "SONIQ_TRANSACTION_UNSUPPORTED",
      );
      expect(await codeOf(() => soniq.enqueueMany([{ job: "bad.echo", args: {} }], { tx: other }))).toBe(
        "SONIQ_TRANSACTION_UNSUPPORTED",
      );
      const memory = new Database(":memory:");
      expect(await codeOf(() => soniq.enqueue("bad.echo", {}, { tx: memory }))).toBe(
        "SONIQ_TRANSACTION_UNSUPPORTED",
      );
      memory.close();
      expect((await soniq.getQueueStats()).total).toBe(0);
      expect(other.prepare("SELECT name FROM sqlite_master WHERE name = 'soniq_jobs'").get()).toBeUndefined();
      // A second connection to the backend's own file is the same database: accepted.
      const same = new Database(join(dir, "own.db"));
      await soniq.enqueue("bad.echo", {}, { tx: same });
      same.close();
      expect((await soniq.getQueueStats()).total).toBe(1);
    } finally {
      await soniq.close();
      own.close();
      other.close();
    }
  });
});
