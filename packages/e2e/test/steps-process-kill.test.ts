/**
 * Durable steps when a worker process dies hard (issue 40 item 8): one job of steps a, b, c, whose side effects
 * the handler appends to a file. Worker 1 is SIGKILLed inside step b, after b's side effect and before its
 * checkpoint; worker 2 (a new process) recovers it as stale and is SIGKILLed between b and c, after b's
 * checkpoint; worker 3 recovers it and finishes. A step whose checkpoint exists never runs again; the step
 * killed before its checkpoint runs once more (at most once after its checkpoint is written); the job ends done.
 * SQL backends only: the memory backend cannot be shared between processes.
 */
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";
import { type Child, killAll, readEffects, startChild, tempDir } from "./steps-support.js";

describe.each(
  [sqliteKind, postgresKind].map((make) => [make().name as "sqlite" | "postgres", make] as const),
)("steps/process-kill on %s", (name, make) => {
  const kind = make();
  const dir = tempDir();
  beforeAll(() => kind.setup(), 30_000);
  afterAll(async () => {
    dir.remove();
    await kind.teardown();
  }, 30_000);

  it("steps/killed-mid-step-and-between-steps: a checkpointed step never runs again, the step killed before its checkpoint runs once more, the job finishes done", async () => {
    const queue = uniqueName("q");
    const soniq = new Soniq({ backend: kind.create(), allowUnknownJobNames: true });
    const children: Child[] = [];
    try {
      await soniq.setup();
      const target = kind.target();
      const effects = dir.path(`${queue}.effects`);
      // Workers 2 and 3 boot now and start their worker (recovering with a 1 s stale threshold) when told.
      const common = { effects, staleAfterMs: 1000 };
      const [w1, w2, w3] = await Promise.all([
        startChild(name, target, queue, "kill", { ...common, killAt: "in:b" }),
        startChild(name, target, queue, "kill", {
          ...common,
          killAt: "after:b",
          startOn: "message",
        }),
        startChild(name, target, queue, "kill", { ...common, startOn: "message" }),
      ]);
      children.push(w1, w2, w3);
      const count = (step: string) => readEffects(effects).filter((e) => e.step === step).length;

      const { id } = await soniq.jobs.enqueue("steps.kill", {}, { queue });
      const checkpoints = async () =>
        (await soniq.jobs.steps(id)).map((s) => [s.name, s.state, s.attempt, s.value]);
      await w1.next((m) => m.killPoint === "in:b" && m.job === id);
      await w1.kill();
      // Killed after b's side effect, before its checkpoint.
      expect(await checkpoints()).toEqual([["a", "done", 1, "a@1"]]);
      expect([count("a"), count("b"), count("c")]).toEqual([1, 1, 0]);
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "processing", attempts: 1 });

      w2.send({ start: true });
      await w2.next((m) => m.killPoint === "after:b" && m.job === id, 30_000);
      await w2.kill();
      // Killed between b's checkpoint and c: b ran again (its checkpoint did not exist), a did not.
      expect(await checkpoints()).toEqual([
        ["a", "done", 1, "a@1"],
        ["b", "done", 2, "b@2"],
      ]);
      expect([count("a"), count("b"), count("c")]).toEqual([1, 2, 0]);

      w3.send({ start: true });
      await eventually(async () => {
        expect(await soniq.jobs.get(id)).toMatchObject({
          status: "done",
          attempts: 3,
          result: { finishedBy: w3.process.pid, attempt: 3 },
        });
      }, 30_000);
      expect(await checkpoints()).toEqual([
        ["a", "done", 1, "a@1"],
        ["b", "done", 2, "b@2"],
        ["c", "done", 3, "c@3"],
      ]);
      // Each step's side effect at most once after its checkpoint: a and c once, b once before its
      // checkpoint (the killed run) and once with it.
      const all = readEffects(effects);
      expect(all.map((e) => [e.step, e.attempt])).toEqual([
        ["a", 1],
        ["b", 1],
        ["b", 2],
        ["c", 3],
      ]);
      expect(all.map((e) => e.pid)).toEqual([w1.process.pid, w1.process.pid, w2.process.pid, w3.process.pid]);
      const workers = await soniq.backend.workers.list();
      for (const dead of [w1, w2]) {
        const id = dead?.messages.find((m) => m.ready)?.ready;
        expect(workers.find((w) => w.id === id)?.status).toBe("stopped");
      }
    } finally {
      await killAll(children);
      await soniq.close();
    }
  }, 120_000);
});
