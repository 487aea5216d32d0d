import { Console } from "node:console";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { logLine } from "../src/common/log-line.js";
import type { Logger } from "../src/index.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();

/** A Console writing into strings, like `console` writes to the terminal. */
function capturedConsole(): { out: Console; stdout: () => string; stderr: () => string } {
  const streams = { stdout: new PassThrough(), stderr: new PassThrough() };
  const text = { stdout: "", stderr: "" };
  streams.stdout.on("data", (chunk: Buffer) => {
    text.stdout += chunk.toString();
  });
  streams.stderr.on("data", (chunk: Buffer) => {
    text.stderr += chunk.toString();
  });
  return { out: new Console(streams), stdout: () => text.stdout, stderr: () => text.stderr };
}

describe("logger: console", () => {
  it("prints one `msg key=value` line per record, warnings and errors on stderr", async () => {
    const { out, stdout, stderr } = capturedConsole();
    const soniq = app({ logger: out });
    const job = soniq.job("emails.send_welcome", async (args: { to: string }, ctx) => {
      ctx.logger.info({ to: args.to, note: "first try" }, "sending the welcome email");
      ctx.logger.warn({ err: new Error("mailbox full") }, "could not send");
    });
    const { id } = await job.enqueue({ to: "ada@example.com" });
    await soniq.worker().runOnce();
    await new Promise((r) => setImmediate(r));
    expect(stdout()).toBe(
      `sending the welcome email jobId=${id} jobName=emails.send_welcome attempt=1 to=ada@example.com note="first try"\n`,
    );
    expect(stderr()).toBe(
      `could not send jobId=${id} jobName=emails.send_welcome attempt=1 err="Error: mailbox full"\n`,
    );
  });

  it("any other logger still gets the pino-style (obj, msg) call", async () => {
    const calls: [Record<string, unknown>, string][] = [];
    const logger: Logger = {
      debug() {},
      warn() {},
      error() {},
      info: (obj, msg) => void calls.push([obj, msg]),
    };
    const soniq = app({ logger });
    const job = soniq.job("logs.plain", async (_args: object, ctx) => ctx.logger.info({ n: 1 }, "hello"));
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    expect(calls).toContainEqual([{ jobId: id, jobName: "logs.plain", attempt: 1, n: 1 }, "hello"]);
  });
});

describe("logLine", () => {
  it("quotes only what needs it and skips undefined fields", () => {
    expect(logLine({ a: "word", b: "two words", c: "", d: 'say "hi"', e: "k=v", f: undefined }, "m")).toBe(
      'm a=word b="two words" c="" d="say \\"hi\\"" e="k=v"',
    );
  });

  it("writes numbers, null, dates, errors with their code, and objects as JSON", () => {
    const err = Object.assign(new TypeError("bad input"), { code: "SONIQ_INVALID_ARGS" });
    const line = logLine(
      { n: 3, ok: false, none: null, at: new Date(0), err, queues: ["a", "b"], big: 2n, nested: { x: 1n } },
      "m",
    );
    expect(line).toBe(
      'm n=3 ok=false none=null at=1970-01-01T00:00:00.000Z err="TypeError: bad input (SONIQ_INVALID_ARGS)" queues=["a","b"] big=2 nested={"x":"1"}',
    );
  });

  it("a circular value is described, never thrown", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(logLine({ loop }, "m")).toBe('m loop="[object Object]"');
  });
});
