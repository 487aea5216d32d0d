import { describe, expect, test } from "vitest";
import { produce } from "../src/producer.js";
import type { SystemSession } from "../src/systems/types.js";

/** A session that records what the producer called, in order. */
function recordingSession(connects: boolean): { session: SystemSession; calls: string[] } {
  const calls: string[] = [];
  const session: SystemSession = {
    enqueueOne: async (_kind, i) => void calls.push(`one ${i}`),
    enqueueBatch: async (_kind, from, count) => void calls.push(`batch ${from}+${count}`),
    counts: async () => ({ pending: 0, done: 0, failed: 0, distinct: 0 }),
    settled: async () => true,
    createWorker: async () => ({ start: async () => {}, stop: async () => {} }),
    close: async () => {},
  };
  if (connects) session.connectProducer = async () => void calls.push("connect");
  return { session, calls };
}

describe("the producer", () => {
  test("opens a lazily connecting session's connection before its first timed call", async () => {
    const { session, calls } = recordingSession(true);
    await produce(session, { mode: "batches", kind: "noop", n: 2_500, batchSize: 1_000 });
    expect(calls).toEqual(["connect", "batch 0+1000", "batch 1000+1000", "batch 2000+500"]);
    await produce(session, { mode: "sequential", kind: "noop", n: 2 });
    expect(calls.slice(4)).toEqual(["connect", "one 0", "one 1"]);
  });

  test("a session without connectProducer is produced to as before", async () => {
    const { session, calls } = recordingSession(false);
    await produce(session, { mode: "sequential", kind: "noop", n: 2 });
    expect(calls).toEqual(["one 0", "one 1"]);
  });
});
