/** Queue controls refuse a name nothing knows (a typo), unless asked to create it. */
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../src/common/errors.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();

describe("queues/known-names", () => {
  it("queues/unknown-name-refused: pause, resume and configure of a name nothing knows are SONIQ_UNKNOWN_QUEUE and write nothing", async () => {
    const soniq = app();
    soniq.job("mail.send", async () => null, { queue: "emails" });
    await soniq.jobs.enqueue("mail.send", {});
    for (const call of [
      () => soniq.queues.pause("emials"),
      () => soniq.queues.resume("nosuchqueue"),
      () => soniq.queues.configure("nosuchqueue", { concurrency: 2 }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(isSoniqError(err, "SONIQ_UNKNOWN_QUEUE"), String(err)).toBe(true);
      expect((err as Error).message).toMatch(/create: true/);
    }
    expect((await soniq.queues.list()).map((q) => q.name)).toEqual(["emails"]);
    expect(await soniq.audit.list()).toEqual([]);
    const bad = await soniq.queues.pause("x", { create: "yes" as never }).catch((e: unknown) => e);
    expect(isSoniqError(bad, "SONIQ_INVALID_ARGUMENT")).toBe(true);
  });

  it("queues/known-names-accepted: a queue with jobs, dead letters, settings, a worker row, or declared by the app; or create: true", async () => {
    const soniq = app();
    soniq.job("mail.send", async () => null, { queue: "declared" });
    await soniq.jobs.enqueue("mail.send", {}, { queue: "with_jobs" });
    await soniq.backend.workers.register({
      id: "00000000-0000-4000-8000-0000000000aa",
      hostname: "h",
      pid: 1,
      queues: ["served"],
      concurrency: 1,
      version: null,
      metadata: null,
    });
    for (const queue of ["declared", "with_jobs", "served", "default"]) {
      expect((await soniq.queues.pause(queue)).paused, queue).toBe(true);
    }
    await soniq.queues.configure("fresh", { concurrency: 3 }, { create: true, actor: "ops" });
    expect((await soniq.queues.resume("fresh")).paused).toBe(false); // it has settings now
    const rows = await soniq.audit.list({ action: "queue.configure" });
    expect(rows.map((r) => [r.target, r.actor, r.outcome])).toEqual([["fresh", "ops", "ok"]]);
  });
});
