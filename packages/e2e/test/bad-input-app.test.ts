/**
 * The bad-input catalogue (see bad-input-support.ts): the constructor, job definitions, `enqueue`,
 * `enqueueMany`, `snooze` and `use`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq, snooze } from "@soniq/core";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Case, catalogue, codeOf, deep } from "./bad-input-support.js";

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
  ["enqueue/unknown-name", "SONIQ_UNKNOWN_TASK_NAME", (f) => f.soniq.jobs.enqueue("bad.missing", {})],
  [
    "enqueue/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, 42 as never),
  ],
  [
    "enqueue/unknown-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { bogus: 1 } as never),
  ],
  ["enqueue/args-deep", "SONIQ_TASK_ARGS_INVALID", (f) => f.soniq.jobs.enqueue("bad.echo", deep(100_000))],
  ["enqueue/args-nul", "SONIQ_TASK_ARGS_INVALID", (f) => f.soniq.jobs.enqueue("bad.echo", { s: "a\u0000b" })],
  [
    "enqueue/args-lone-surrogate",
    "SONIQ_TASK_ARGS_INVALID",
    (f) => f.soniq.jobs.enqueue("bad.echo", { s: "\ud800" }),
  ],
  ["enqueue/args-bigint", "SONIQ_TASK_ARGS_INVALID", (f) => f.soniq.jobs.enqueue("bad.echo", { n: 1n })],
  [
    "enqueue/dedup-10kb",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { dedupKey: "k".repeat(10_000) }),
  ],
  [
    "enqueue/dedup-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { dedupKey: "a\u0000" }),
  ],
  [
    "enqueue/run-at-year-300000",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { runAt: new Date("+300000-01-01T00:00:00Z") }),
  ],
  [
    "enqueue/run-at-year-200000",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { runAt: new Date(Date.UTC(200_000, 0, 1)) }),
  ],
  [
    "enqueue/run-at-invalid",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { runAt: new Date("nope") }),
  ],
  [
    "enqueue/delay-negative",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { delayMs: -1 }),
  ],
  [
    "enqueue/priority-string",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { priority: "1" as never }),
  ],
  ["enqueueMany/not-array", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.enqueueMany(null as never)],
  [
    "enqueueMany/unknown-call-option",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueueMany([{ job: "bad.echo", args: {} }], { bogus: 1 } as never),
  ],
  [
    "enqueueMany/call-options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueueMany([{ job: "bad.echo", args: {} }], 42 as never),
  ],
  [
    "enqueueMany/item-tx",
    "SONIQ_INVALID_ARGUMENT",
    (f) =>
      f.soniq.jobs.enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: {}, options: { tx: {} } as never },
      ]),
  ],
  [
    "enqueueMany/item-unknown-key",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.jobs.enqueueMany([{ job: "bad.echo", args: {}, bogus: 1 } as never]),
  ],
  ["enqueueMany/item-null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.enqueueMany([null as never])],
  [
    "enqueueMany/second-item-bad-args",
    "SONIQ_TASK_ARGS_INVALID",
    (f) =>
      f.soniq.jobs.enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: { n: Number.NaN } },
      ]),
  ],
  ["enqueue/name-nul", "SONIQ_INVALID_TASK_NAME", (f) => f.soniq.jobs.enqueue("bad.\u0000", {})],
  [
    "enqueue/queue-nul",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { queue: "q\u0000" }),
  ],
  [
    "enqueue/queue-empty",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { queue: "" }),
  ],
  [
    "enqueue/priority-fraction",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, { priority: 1.5 }),
  ],
  [
    "job/options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.job("bad.optnum", async () => 1, 5 as never),
  ],
  // `null` is not "no options": an options argument is an object or left out.
  [
    "job/options-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.job("bad.optnull", async () => 1, null as never),
  ],
  [
    "job/options-array",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.job("bad.optarray", async () => 1, [] as never),
  ],
  [
    "enqueue/options-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, null as never),
  ],
  [
    "enqueue/options-array",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueue("bad.echo", {}, [] as never),
  ],
  ["definition.enqueue/options-null", "SONIQ_INVALID_OPTIONS", (f) => f.echo.enqueue({}, null as never)],
  ["definition.enqueue/options-string", "SONIQ_INVALID_OPTIONS", (f) => f.echo.enqueue({}, "q" as never)],
  [
    "enqueueMany/call-options-null",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueueMany([{ job: "bad.echo", args: {} }], null as never),
  ],
  [
    "enqueueMany/item-options-null",
    "SONIQ_INVALID_OPTIONS",
    (f) =>
      f.soniq.jobs.enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: {}, options: null as never },
      ]),
  ],
  [
    "enqueueMany/item-options-number",
    "SONIQ_INVALID_OPTIONS",
    (f) => f.soniq.jobs.enqueueMany([{ job: "bad.echo", args: {}, options: 5 as never }]),
  ],
  ["snooze/negative", "SONIQ_INVALID_ARGUMENT", () => snooze(-1)],
  ["use/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.use(null as never)],
  ["use/hook-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.use({ beforeJob: 5 } as never)],
  ["use/misspelt-hook", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.use({ beforejob: () => {} } as never)],
  ["snooze/nan", "SONIQ_INVALID_ARGUMENT", () => snooze(Number.NaN)],
];

catalogue("app", CASES, (f) => {
  it("bad-input/item-index-named: the failing enqueueMany item is named by its index", async () => {
    const err = await f()
      .soniq.jobs.enqueueMany([
        { job: "bad.echo", args: {} },
        { job: "bad.echo", args: {}, options: { tx: {} } as never },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "SONIQ_INVALID_ARGUMENT", context: { index: 1, key: "tx" } });
  });

  it("bad-input/args-depth-limit: 256 levels are stored, 257 are refused", async () => {
    const ok = await f().soniq.jobs.enqueue("bad.echo", deep(255));
    expect((await f().soniq.jobs.get(ok.id))?.status).toBe("queued");
    expect(await f().soniq.jobs.cancel(ok.id)).toBe(true);
    expect(await codeOf(() => f().soniq.jobs.enqueue("bad.echo", deep(257)))).toBe("SONIQ_TASK_ARGS_INVALID");
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
      expect(await codeOf(() => soniq.jobs.enqueue("bad.echo", {}, { tx: other }))).toBe(
        "SONIQ_TRANSACTION_UNSUPPORTED",
      );
      expect(await codeOf(() => soniq.jobs.enqueueMany([{ job: "bad.echo", args: {} }], { tx: other }))).toBe(
        "SONIQ_TRANSACTION_UNSUPPORTED",
      );
      const memory = new Database(":memory:");
      expect(await codeOf(() => soniq.jobs.enqueue("bad.echo", {}, { tx: memory }))).toBe(
        "SONIQ_TRANSACTION_UNSUPPORTED",
      );
      memory.close();
      expect((await soniq.jobs.stats()).total).toBe(0);
      expect(other.prepare("SELECT name FROM sqlite_master WHERE name = 'soniq_jobs'").get()).toBeUndefined();
      // A second connection to the backend's own file is the same database: accepted.
      const same = new Database(join(dir, "own.db"));
      await soniq.jobs.enqueue("bad.echo", {}, { tx: same });
      same.close();
      expect((await soniq.jobs.stats()).total).toBe(1);
    } finally {
      await soniq.close();
      own.close();
      other.close();
    }
  });
});
