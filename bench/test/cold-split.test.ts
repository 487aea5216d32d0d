/** W4's cold split: the first tenth of a drain's jobs reported apart from the rest (workloads.ts `coldSplit`). */
import { describe, expect, it } from "vitest";
import { InvalidRun } from "../src/measure.js";
import { coldSplit } from "../src/workloads.js";

describe("bench/cold-split", () => {
  it("bench/cold-split-at-start-order: splits at the start of the first job after the cold ones, whatever the index order", () => {
    // Ten jobs, indexes starting out of order: the first four to start, from 1,000 to 1,400, are cold; the fifth
    // started at 1,410 (the cold part is 410 ms); the storage showed nothing pending at 1,470 (the six others, 60 ms).
    const times = [1_000, 1_400, 1_100, 1_410, 1_450, 1_200, 1_420, 1_430, 1_440, 1_460];
    const split = coldSplit(times, 4, 1_470);
    expect(split.jobs).toBe(4);
    expect(split.coldMs).toBe(410);
    expect(split.coldJobsPerSec).toBeCloseTo(4 / 0.41, 6);
    expect(split.warmJobsPerSec).toBeCloseTo(100, 6);
  });

  it("bench/cold-split-bounds: a cold part of none or of every job is an invalid run, not a figure", () => {
    expect(() => coldSplit([1, 2, 3], 0, 4)).toThrow(InvalidRun);
    expect(() => coldSplit([1, 2, 3], 3, 4)).toThrow(InvalidRun);
  });
});
