/** The app without storage: options, definitions and enqueue validation against a recording stub backend. */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { Soniq } from "../src/app/soniq.js";
import { isSoniqError } from "../src/common/errors.js";
import type { NewJob } from "../src/contract/index.js";
import { caught, stubBackend } from "./support.js";

describe("app/options", () => {
  it("reports every problem in one SONIQ_INVALID_OPTIONS error", () => {
    const { backend } = stubBackend();
    const err = caught(
      () =>
        new Soniq({
          backend,
          defaultPriority: 1.5,
          defaultMaxAttempts: 0,
          defaultQueue: "Bad Queue",
          retry: { backoff: "sideways" as "fixed" },
          logger: {} as never,
          typo: true,
        } as never),
    );
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    const problems = (err as { context: { problems: string[] } }).context.problems;
    expect(problems).toHaveLength(6);
    expect(problems.join("\n")).toMatch(/no option "typo"/);
  });

  it("fills defaults and freezes them; instances share nothing", () => {
    const a = new Soniq({ backend: stubBackend().backend });
    const b = new Soniq({ backend: stubBackend().backend, defaultQueue: "other", producerId: null });
    expect(a.options).toMatchObject({
      allowUnknownJobNames: false,
      defaultQueue: "default",
      defaultPriority: 100,
      defaultMaxAttempts: 3,
      defaultTimeoutMs: 300_000,
      resultTtlMs: 300_000,
      maxSnoozeMs: 86_400_000,
    });
    expect(a.options.producerId).toMatch(/:\d+$/);
    expect(Object.isFrozen(a.options)).toBe(true);
    a.job("same.name", async () => null);
    expect(b.jobs.names()).toEqual([]);
    expect(b.options.defaultQueue).toBe("other");
    expect(b.options.producerId).toBeNull();
  });

  it("worker options: validated together, heartbeat must be below the stale threshold", () => {
    const soniq = new Soniq({ backend: stubBackend().backend });
    const err = caught(() =>
      soniq.worker({ concurrency: 0, queues: [], heartbeatIntervalMs: 10, staleAfterMs: 5 }),
    );
    expect((err as { context: { problems: string[] } }).context.problems).toHaveLength(3);
    const w = soniq.worker({ concurrency: 4 });
    expect(w.options).toMatchObject({
      queues: null,
      concurrency: 4,
      batchSize: 4,
      maxBatchSize: 500,
      completeBatchSize: 500,
      pollIntervalMs: 1000,
      heartbeatIntervalMs: 5000,
      staleAfterMs: 60_000,
      maintenanceIntervalMs: 60_000,
      shutdownTimeoutMs: 30_000,
    });
  });
});

describe("app/enqueue", () => {
  it("builds the row from job options, instance defaults and enqueue options", async () => {
    const { backend, calls } = stubBackend();
    const soniq = new Soniq({ backend, producerId: "p1" });
    const job = soniq.job("emails.send", async (_args: { to: string }) => null, {
      queue: "mail",
      priority: 5,
      maxAttempts: 7,
      unique: true,
    });
    const runAt = new Date(Date.now() + 60_000);
    await job.enqueue({ to: "a@b.c" }, { runAt, dedupKey: "k1" });
    const row = calls.find((c) => c.method === "jobs.enqueue")?.args[0] as NewJob;
    expect(row).toMatchObject({
      jobName: "emails.send",
      args: { to: "a@b.c" },
      queue: "mail",
      priority: 5,
      maxAttempts: 7,
      unique: true,
      dedupKey: "k1",
      scheduledAt: runAt,
      producerId: "p1",
    });
    expect(row.argsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("rejects bad input before anything reaches the backend", async () => {
    const { backend, calls } = stubBackend();
    const soniq = new Soniq({ backend });
    const typed = soniq.job("typed.job", async (args) => args.n, { schema: z.object({ n: z.number() }) });
    const attempts: [Promise<unknown>, string][] = [
      [typed.enqueue({ n: "x" } as never), "SONIQ_TASK_ARGS_INVALID"],
      [soniq.jobs.enqueue("typed.job", { n: 1n }), "SONIQ_TASK_ARGS_INVALID"],
      [soniq.jobs.enqueue("nobody.home", {}), "SONIQ_UNKNOWN_TASK_NAME"],
      [soniq.jobs.enqueue("Not Valid", {}), "SONIQ_INVALID_TASK_NAME"],
      [typed.enqueue({ n: 1 }, { priority: "high" as never }), "SONIQ_INVALID_OPTIONS"],
      [typed.enqueue({ n: 1 }, { delayMs: 1e300 }), "SONIQ_INVALID_OPTIONS"],
      [typed.enqueue({ n: 1 }, { tx: { client: "c" } }), "SONIQ_TRANSACTION_UNSUPPORTED"],
      [
        soniq.jobs.enqueueMany([
          { job: typed, args: { n: 1 } },
          { job: typed, args: {} },
        ]),
        "SONIQ_TASK_ARGS_INVALID",
      ],
    ];
    for (const [promise, code] of attempts) {
      const err = await promise.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isSoniqError(err, code as never), code).toBe(true);
    }
    expect(calls.filter((c) => c.method.startsWith("jobs.enqueue"))).toEqual([]);
  });

  it("enqueueMany is one backend call; tx passes through on transactional backends", async () => {
    const { backend, calls } = stubBackend(true);
    const soniq = new Soniq({ backend, allowUnknownJobNames: true });
    const job = soniq.job("a.b", async () => null);
    const tx = { client: "c" };
    const results = await soniq.jobs.enqueueMany(
      [
        { job, args: { i: 1 } },
        { job: "c.d", args: { i: 2 }, options: { queue: "q2" } },
      ],
      { tx },
    );
    expect(results).toHaveLength(2);
    const many = calls.filter((c) => c.method === "jobs.enqueueMany");
    expect(many).toHaveLength(1);
    expect(many[0]?.args[1]).toEqual({ tx });
    expect(((many[0]?.args[0] ?? []) as NewJob[]).map((j) => [j.jobName, j.queue])).toEqual([
      ["a.b", "default"],
      ["c.d", "q2"],
    ]);
    expect(await soniq.jobs.enqueueMany([])).toEqual([]);
  });

  it("close() is memoised and closes the backend once; later calls reject with SONIQ_CLOSED", async () => {
    const { backend, calls } = stubBackend();
    const soniq = new Soniq({ backend });
    const closing = soniq.close();
    expect(soniq.close()).toBe(closing);
    await closing;
    await soniq[Symbol.asyncDispose]();
    expect(calls.filter((c) => c.method === "close")).toHaveLength(1);
    await expect(soniq.jobs.get("x")).rejects.toMatchObject({ code: "SONIQ_CLOSED" });
  });
});

describe("app/types", () => {
  it("a schema types the handler with its output and enqueue with its input; tx follows the backend", () => {
    const soniq = new Soniq({ backend: stubBackend(true).backend });
    const job = soniq.job(
      "typed.defaults",
      async (args) => {
        expectTypeOf(args).toEqualTypeOf<{ count: number }>();
        return args.count * 2;
      },
      { schema: z.object({ count: z.number().default(21) }) },
    );
    expectTypeOf(job.enqueue).parameter(0).toEqualTypeOf<{ count?: number | undefined }>();
    expectTypeOf(job.enqueue)
      .parameter(1)
      .exclude<undefined>()
      .toHaveProperty("tx")
      .toEqualTypeOf<{ client: string } | undefined>();
    const plain = soniq.job("plain.job", async (args: { to: string }) => ({ sent: args.to }));
    expectTypeOf(plain.enqueue).parameter(0).toEqualTypeOf<{ to: string }>();
  });
});
