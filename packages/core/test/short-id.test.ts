import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newJobId } from "../src/common/ids.js";
import { shortId } from "../src/ops.js";

describe("ids/short-id", () => {
  it("ids/short-ids-differ: the short ids of jobs made together (UUIDv7) and of workers (UUIDv4) differ", () => {
    const jobs = Array.from({ length: 200 }, () => newJobId());
    expect(new Set(jobs.map((id) => id.slice(0, 8))).size).toBeLessThan(3); // why a prefix will not do
    expect(new Set(jobs.map(shortId)).size).toBe(200);
    const workers = Array.from({ length: 50 }, () => randomUUID());
    expect(new Set(workers.map(shortId)).size).toBe(50);
  });

  it("ids/short-id-is-the-tail: 8 hex digits from the end of a UUID; a shorter string is kept whole", () => {
    expect(shortId("01936d2a-7b1c-7000-8000-00000a1b2c3d")).toBe("0a1b2c3d");
    expect(shortId("abc")).toBe("abc");
  });
});
