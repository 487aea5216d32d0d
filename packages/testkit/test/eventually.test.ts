import { eventually } from "@soniq/testkit";
import { describe, expect, it } from "vitest";

describe("eventually", () => {
  it("returns the first value fn produces without throwing", async () => {
    let calls = 0;
    const value = await eventually(
      () => {
        calls++;
        if (calls < 3) throw new Error("not yet");
        return "ready";
      },
      { intervalMs: 1 },
    );
    expect(value).toBe("ready");
    expect(calls).toBe(3);
  });

  it("gives up after timeoutMs with the last failure as message and cause", async () => {
    const started = Date.now();
    const error = await eventually(
      () => {
        throw new Error("job still queued");
      },
      { timeoutMs: 100, intervalMs: 10 },
    ).catch((e: unknown) => e as Error);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.message).toMatch(/still failing after 100 ms \(\d+ attempts\): job still queued/);
    expect((error.cause as Error).message).toBe("job still queued");
  });
});
