import { describe, expect, it } from "vitest";
import type { Backend, DeadLetterItem } from "../src/backend.js";
import { BACKEND_METHODS, guardBackend } from "../src/guard.js";

function fake(withBatch: boolean): Backend<never> {
  const backend: Record<string, unknown> = {
    name: "fake",
    capabilities: { notify: false, transactionalEnqueue: false, advisoryLocks: false, multiProcess: false },
  };
  for (const m of BACKEND_METHODS) backend[m] = async () => undefined;
  if (withBatch) backend.markJobsDeadLetter = async (items: DeadLetterItem[]) => items.map((i) => i.id);
  return backend as unknown as Backend<never>;
}

describe("guard/optional-methods", () => {
  it("forwards markJobsDeadLetter when the backend has it, and guards it after close", async () => {
    const guarded = guardBackend(fake(true));
    const item = { id: "a", attempt: 1, reason: "permanent_failure", error: null };
    expect(await guarded.markJobsDeadLetter?.([item])).toEqual(["a"]);
    await guarded.close();
    await expect(guarded.markJobsDeadLetter?.([item])).rejects.toMatchObject({ code: "SONIQ_CLOSED" });
  });

  it("leaves it undefined when the backend lacks it", () => {
    expect(guardBackend(fake(false)).markJobsDeadLetter).toBeUndefined();
  });
});
