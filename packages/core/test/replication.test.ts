/** `soniq.replication.status()`: the optional backend method through the guard, and "no replica" without it. */
import { describe, expect, it } from "vitest";
import { Soniq } from "../src/app/soniq.js";
import { isSoniqError } from "../src/common/errors.js";
import type { Backend } from "../src/contract/index.js";
import { stubBackend } from "./support.js";

describe("replication", () => {
  it("replication/no-method: a backend without replicationStatus reports no replica", async () => {
    const soniq = new Soniq({ backend: stubBackend().backend });
    expect(await soniq.replication.status()).toEqual({ readReplica: false, lagMs: null });
    await soniq.close();
  });

  it("replication/through-the-guard: the backend's answer; after close it rejects with SONIQ_CLOSED", async () => {
    const { backend } = stubBackend();
    const withReplica = {
      ...backend,
      replicationStatus: async () => ({ readReplica: true, lagMs: 250 }),
    } as Backend<{ client: string }>;
    const soniq = new Soniq({ backend: withReplica });
    expect(await soniq.replication.status()).toEqual({ readReplica: true, lagMs: 250 });
    await soniq.close();
    const err = await soniq.replication.status().catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_CLOSED")).toBe(true);
  });
});
