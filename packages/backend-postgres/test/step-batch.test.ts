/**
 * The group commit of `steps.save` and `steps.wait` (internal/step-batch.ts), driven with recording writers
 * instead of a database: which writes share a group, in what order, within which bounds, and where each answer
 * and each error goes. The statement and the transaction themselves are tested against PostgreSQL in
 * steps.test.ts.
 */
import type { StepRef, StepWrite } from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import {
  GroupCommit,
  type ItemOutcome,
  MAX_ITEMS_PER_GROUP,
  MAX_TEXT_PER_GROUP,
  type StepSave,
  stepSave,
} from "../src/internal/step-batch.js";

const ref = (id: string): StepRef => ({ id, attempt: 1, workerId: null });
const write = (name: string, value: unknown = 1): StepWrite => ({
  name,
  state: "done",
  value,
  error: null,
  startedAt: new Date(0),
});
const label = (s: StepSave) => `${s.ref.id}/${s.write.name}`;

/** Saves through a group commit whose writes are recorded, each answering `applied` (default: every item applied). */
function recording(applied: (s: StepSave) => boolean | Error = () => true) {
  const writes: string[][] = [];
  const answer = (s: StepSave) => {
    const a = applied(s);
    if (a instanceof Error) throw a;
    return a;
  };
  const group = new GroupCommit<StepSave, boolean>(
    async (one) => {
      writes.push([label(one)]);
      return answer(one);
    },
    async (many) => {
      writes.push(many.map(label));
      return many.map((s): ItemOutcome<boolean> => ({ ok: true, value: answer(s) }));
    },
  );
  const batcher = { save: (r: StepRef, w: StepWrite) => group.write(stepSave(r, w)) };
  return { batcher, writes };
}

describe("GroupCommit", () => {
  it("writes a lone save by itself, with its value as JSON text", async () => {
    const seen: StepSave[] = [];
    const group = new GroupCommit<StepSave, boolean>(
      async (one) => {
        seen.push(one);
        return true;
      },
      async () => {
        throw new Error("a lone save never goes through the group statement");
      },
    );
    expect(await group.write(stepSave(ref("j1"), write("a", { n: 1 })))).toBe(true);
    expect(seen.map((s) => s.json)).toEqual(['{"n":1}']);
    expect(await group.write(stepSave(ref("j1"), write("b", null)))).toBe(true);
    expect(seen.map((s) => s.json)).toEqual(['{"n":1}', null]);
  });

  it("groups the saves of one turn into one write, in call order, and answers each", async () => {
    const { batcher, writes } = recording((s) => s.ref.id !== "j2");
    const answers = await Promise.all([
      batcher.save(ref("j1"), write("a")),
      batcher.save(ref("j2"), write("a")),
      batcher.save(ref("j3"), write("a")),
      batcher.save(ref("j1"), write("b")),
    ]);
    expect(writes).toEqual([["j1/a", "j2/a", "j3/a", "j1/b"]]);
    expect(answers).toEqual([true, false, true, true]);
  });

  it("saves made while a write is in flight form the next write", async () => {
    const { batcher, writes } = recording();
    const first = batcher.save(ref("j1"), write("a"));
    await new Promise<void>((resolve) => setImmediate(resolve));
    // The first write has started: these wait for it and go together.
    const later = [batcher.save(ref("j2"), write("a")), batcher.save(ref("j3"), write("a"))];
    await Promise.all([first, ...later]);
    expect(writes).toEqual([["j1/a"], ["j2/a", "j3/a"]]);
  });

  it("never puts two saves of one job's name in one write, and applies them in call order", async () => {
    const { batcher, writes } = recording();
    await Promise.all([
      batcher.save(ref("j1"), write("a", 1)),
      batcher.save(ref("j2"), write("a")),
      batcher.save(ref("j1"), write("a", 2)),
      batcher.save(ref("j1"), write("b")),
      batcher.save(ref("j1"), write("a", 3)),
    ]);
    // j1/b waits too: it must not pass the job's earlier save left for the next write.
    expect(writes).toEqual([["j1/a", "j2/a"], ["j1/a", "j1/b"], ["j1/a"]]);
  });

  it(`writes at most ${MAX_ITEMS_PER_GROUP} saves and ${MAX_TEXT_PER_GROUP} characters of JSON at once`, async () => {
    const { batcher, writes } = recording();
    const many = Array.from({ length: MAX_ITEMS_PER_GROUP + 5 }, (_, i) =>
      batcher.save(ref(`j${i}`), write("a")),
    );
    await Promise.all(many);
    expect(writes.map((w) => w.length)).toEqual([MAX_ITEMS_PER_GROUP, 5]);

    const big = "x".repeat(MAX_TEXT_PER_GROUP / 2);
    // Two halves plus their quotes exceed the bound: the second waits; another job's small one still joins the
    // first, but not a later save of the job that waits.
    writes.length = 0;
    await Promise.all([
      batcher.save(ref("b1"), write("a", big)),
      batcher.save(ref("b2"), write("a", big)),
      batcher.save(ref("b3"), write("a", 1)),
      batcher.save(ref("b2"), write("b", 1)),
    ]);
    expect(writes).toEqual([
      ["b1/a", "b3/a"],
      ["b2/a", "b2/b"],
    ]);
  });

  it("when a grouped write fails, writes each save again alone: an error reaches only its own save", async () => {
    const bad = new Error("invalid input syntax for type uuid");
    const { batcher, writes } = recording((s) => (s.ref.id === "bad" ? bad : true));
    const answers = await Promise.allSettled([
      batcher.save(ref("j1"), write("a")),
      batcher.save(ref("bad"), write("a")),
      batcher.save(ref("j2"), write("a")),
    ]);
    expect(answers).toEqual([
      { status: "fulfilled", value: true },
      { status: "rejected", reason: bad },
      { status: "fulfilled", value: true },
    ]);
    expect(writes).toEqual([["j1/a", "bad/a", "j2/a"], ["j1/a"], ["bad/a"], ["j2/a"]]);
    // The batcher goes on after a failure.
    expect(await batcher.save(ref("j3"), write("a"))).toBe(true);
  });

  it("passes each item's own outcome from a group: a value, or an error that reaches that item only", async () => {
    const own = new Error("this item's own error");
    const group = new GroupCommit<StepSave, boolean>(
      async () => {
        throw new Error("not written alone");
      },
      async (many) =>
        many.map(
          (s): ItemOutcome<boolean> =>
            s.ref.id === "j2" ? { ok: false, error: own } : { ok: true, value: true },
        ),
    );
    const answers = await Promise.allSettled([
      group.write(stepSave(ref("j1"), write("a"))),
      group.write(stepSave(ref("j2"), write("a"))),
      group.write(stepSave(ref("j3"), write("a"))),
    ]);
    expect(answers).toEqual([
      { status: "fulfilled", value: true },
      { status: "rejected", reason: own },
      { status: "fulfilled", value: true },
    ]);
  });

  it("with several groups in flight, a job's next item waits for its group in flight", async () => {
    const writes: string[][] = [];
    const open: (() => void)[] = [];
    const hold = (items: readonly StepSave[]) => {
      writes.push(items.map(label));
      return new Promise<void>((resolve) => open.push(resolve));
    };
    const group = new GroupCommit<StepSave, boolean>(
      async (one) => {
        await hold([one]);
        return true;
      },
      async (many) => {
        await hold(many);
        return many.map((): ItemOutcome<boolean> => ({ ok: true, value: true }));
      },
      2,
    );
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const all = [group.write(stepSave(ref("j1"), write("a"))), group.write(stepSave(ref("j2"), write("a")))];
    await turn();
    expect(writes).toEqual([["j1/a", "j2/a"]]);
    // The first group is in flight: a second starts beside it, without j1, whose item waits for the first.
    all.push(group.write(stepSave(ref("j1"), write("b"))), group.write(stepSave(ref("j3"), write("a"))));
    await turn();
    await turn();
    expect(writes).toEqual([["j1/a", "j2/a"], ["j3/a"]]);
    // Two in flight: nothing more starts until one ends.
    all.push(group.write(stepSave(ref("j4"), write("a"))));
    await turn();
    await turn();
    expect(writes).toHaveLength(2);
    open.shift()?.();
    await turn();
    await turn();
    await turn();
    expect(writes).toEqual([["j1/a", "j2/a"], ["j3/a"], ["j1/b", "j4/a"]]);
    for (;;) {
      const next = open.shift();
      if (next === undefined) break;
      next();
      await turn();
    }
    expect(await Promise.all(all)).toEqual([true, true, true, true, true]);
  });
});
