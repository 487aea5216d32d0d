import { describe, expect, it } from "vitest";
import { type Middleware, runChain } from "../src/app/plugins.js";
import { safeLogger, silentLogger } from "../src/common/logger.js";
import { isValidJobName } from "../src/common/names.js";
import { TypedEmitter } from "../src/common/typed-emitter.js";
import type { JobContext } from "../src/jobs/context.js";
import { isPermanentError, isSnooze, PermanentError, snooze } from "../src/jobs/outcomes.js";
import { formatError, MAX_ERROR_LENGTH } from "../src/worker/runner.js";

const ctx = {} as JobContext;

describe("middleware/chain", () => {
  it("runs outer to inner and lets each transform the result", async () => {
    const trace: string[] = [];
    const mw =
      (name: string): Middleware =>
      async (_ctx, next) => {
        trace.push(`${name}>`);
        const r = await next();
        trace.push(`<${name}`);
        return `${name}(${String(r)})`;
      };
    const result = await runChain([mw("a"), mw("b")], ctx, async () => "h");
    expect(result).toBe("a(b(h))");
    expect(trace).toEqual(["a>", "b>", "<b", "<a"]);
  });

  it("short-circuits, propagates throws (sync or async), and refuses a second next()", async () => {
    let ran = false;
    const final = async () => {
      ran = true;
      return 1;
    };
    expect(await runChain([async () => "cached"], ctx, final)).toBe("cached");
    expect(ran).toBe(false);
    await expect(
      runChain(
        [
          () => {
            throw new Error("sync");
          },
        ],
        ctx,
        final,
      ),
    ).rejects.toThrow("sync");
    await expect(
      runChain([], ctx, () => {
        throw new Error("handler sync throw");
      }),
    ).rejects.toThrow("handler sync throw");
    await expect(
      runChain(
        [
          async (_c, next) => {
            await next();
            return next();
          },
        ],
        ctx,
        final,
      ),
    ).rejects.toThrow(/more than once/);
  });
});

describe("outcomes", () => {
  it("PermanentError and snooze are recognised by brand", () => {
    expect(isPermanentError(new PermanentError("no"))).toBe(true);
    expect(isPermanentError(new Error("no"))).toBe(false);
    const s = snooze(500, "later");
    expect(isSnooze(s)).toBe(true);
    expect(s).toMatchObject({ delayMs: 500, reason: "later" });
    expect(Object.isFrozen(s)).toBe(true);
    expect(isSnooze({ delayMs: 1 })).toBe(false);
    expect(() => snooze(-1)).toThrow(expect.objectContaining({ code: "SONIQ_INVALID_ARGUMENT" }));
  });

  it("formatError keeps name, message and stack, capped at 8 KiB", () => {
    const text = formatError(new RangeError("out of range"));
    expect(text).toMatch(/^RangeError: out of range\n\s+at /);
    expect(formatError("plain")).toBe("plain");
    expect(formatError({ code: 1 })).toBe('Non-error thrown: {"code":1}');
    expect(formatError(new Error("y".repeat(10_000)))).toHaveLength(MAX_ERROR_LENGTH);
  });

  it("formatError cuts a message that fills the cap without formatting the stack it would cut off", () => {
    const err = new TypeError("z".repeat(100_000));
    let stackRead = false;
    const stack = err.stack;
    Object.defineProperty(err, "stack", {
      get: () => {
        stackRead = true;
        return stack;
      },
    });
    const text = formatError(err);
    expect(text).toBe(`TypeError: ${"z".repeat(MAX_ERROR_LENGTH - "TypeError: ".length)}`);
    expect(stackRead).toBe(false);
    // Below the cap the stack is kept, as before.
    const short = formatError(new TypeError("z".repeat(100)));
    expect(short).toMatch(/^TypeError: z{100}\n\s+at /);
  });
});

describe("names", () => {
  it("dotted lowercase only", () => {
    for (const ok of ["a", "emails.send_welcome", "v2.x_1.y"]) expect(isValidJobName(ok), ok).toBe(true);
    for (const bad of ["", "A", "a..b", ".a", "a.", "a-b", "a b", 3, "é"])
      expect(isValidJobName(bad), String(bad)).toBe(false);
  });
});

describe("events-and-logger", () => {
  it("a throwing or rejecting listener is reported, never thrown to the emitter", async () => {
    const reported: string[] = [];
    const emitter = new TypedEmitter<{ tick: number }>((event) => reported.push(event));
    const got: number[] = [];
    emitter.on("tick", () => {
      throw new Error("bad listener");
    });
    emitter.on("tick", async () => {
      throw new Error("bad async listener");
    });
    const off = emitter.on("tick", (n) => void got.push(n));
    emitter.once("tick", (n) => void got.push(n * 10));
    emitter.emit("tick", 1);
    off();
    emitter.emit("tick", 2);
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([1, 10]);
    expect(reported).toEqual(["tick", "tick", "tick", "tick"]); // two bad listeners, two emits
  });

  it("safeLogger swallows a throwing logger and adds bindings; silent is shared", () => {
    const lines: unknown[] = [];
    const log = safeLogger(
      {
        debug: () => {
          throw new Error("broken");
        },
        info: (o, m) => void lines.push([o, m]),
        warn: () => {},
        error: () => {},
      },
      { jobId: "j1" },
    );
    expect(() => log.debug({}, "x")).not.toThrow();
    log.info({ a: 1 }, "hello");
    expect(lines).toEqual([[{ jobId: "j1", a: 1 }, "hello"]]);
    expect(safeLogger(silentLogger)).toBe(silentLogger);
  });
});
