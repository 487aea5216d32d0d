/** What the operator surfaces share from `@soniq/core/ops`: typed durations and instants, the replay check, redaction. */
import { describe, expect, it } from "vitest";
import type { Explanation, WebhookDelivery } from "../src/index.js";
import { createRedactor, REDACTED } from "../src/observability/redact.js";
import {
  parseDuration,
  parsePastInstant,
  replayRefusal,
  shownDelivery,
  shownExplanation,
  shownSchedule,
} from "../src/ops.js";

describe("ops/instants", () => {
  it("ops/parse-duration: ms, s, m, h, d (spaces allowed); anything else is null", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration(" 15 m ")).toBe(900_000);
    expect(parseDuration("2h")).toBe(7_200_000);
    expect(parseDuration("7d")).toBe(604_800_000);
    for (const bad of ["", "2", "h", "1.5h", "-2h", "2w", "2 hours", "1h30m"]) {
      expect(parseDuration(bad), bad).toBeNull();
    }
  });

  it("ops/past-instant: a duration is that long before now; an ISO date as written; else null", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(parsePastInstant("2h", now)).toEqual(new Date("2026-12-01T10:00:00Z"));
    expect(parsePastInstant("0s", now)).toEqual(new Date(now));
    expect(parsePastInstant("2026-11-30T09:00:00Z", now)).toEqual(new Date("2026-11-30T09:00:00Z"));
    expect(parsePastInstant("yesterday-ish", now)).toBeNull();
    expect(parsePastInstant("", now)).toBeNull();
  });
});

describe("ops/replay-refusal", () => {
  const workers = (...names: string[][]) => ({
    list: async () => names.map((jobNames) => ({ jobNames })) as never,
  });

  it("ops/replay-refusal: null when every name is registered (or there are none)", async () => {
    const w = workers(["a.one"], ["b.two", "a.one"]);
    expect(await replayRefusal(w, ["a.one", "b.two", "a.one"], "pass --force")).toBeNull();
    expect(await replayRefusal(workers(), [], "pass --force")).toBeNull();
  });

  it("ops/replay-refusal-text: names the unregistered ones, sorted and once, and how to go on", async () => {
    const text = await replayRefusal(
      workers(["a.one"]),
      ["z.last", "a.one", "m.mid", "z.last"],
      "pass force: true",
    );
    expect(text).toBe(
      "no worker has registered m.mid, z.last (the task registry), so a replayed job would wait until one does. " +
        "Start a worker that defines it, or pass force: true. Nothing was changed.",
    );
  });
});

describe("ops/redaction", () => {
  const redact = createRedactor(["password", "**.token"]);
  const none = createRedactor(undefined);

  it("ops/shown-schedule: the args read as the args of the job it fires", () => {
    const schedule = { name: "nightly", jobName: "reports.build", args: { password: "p4ssw0rd", day: 1 } };
    expect(shownSchedule(redact, schedule)).toEqual({ ...schedule, args: { password: REDACTED, day: 1 } });
    expect(shownSchedule(none, schedule)).toEqual(schedule);
  });

  it("ops/shown-explanation: evidence's last error scrubbed of the row's secrets; unchanged without a row or rule", () => {
    const explanation: Explanation = {
      status: "queued",
      verdict: "scheduled",
      reasons: [
        {
          code: "retry_backoff",
          message: "retrying",
          evidence: { lastError: "denied for p4ssw0rd", attempt: 2 },
        },
        { code: "queue_paused", message: "paused", evidence: { queue: "default" } },
      ],
    };
    const row = { jobName: "auth.login", args: { password: "p4ssw0rd" } };
    const shown = shownExplanation(redact, explanation, row);
    expect(shown.reasons[0]?.evidence).toEqual({ lastError: `denied for ${REDACTED}`, attempt: 2 });
    expect(shown.reasons[1]).toBe(explanation.reasons[1]);
    expect(shownExplanation(redact, explanation, null)).toBe(explanation);
    expect(shownExplanation(none, explanation, row)).toBe(explanation);
  });

  it("ops/shown-delivery: the job values a payload quotes go through redact; other payloads as they are", () => {
    const delivery = {
      id: "d1",
      payload: {
        event: "job.failed",
        timestamp: "2026-12-01T00:00:00Z",
        data: {
          jobName: "auth.login",
          args: { password: "p4ssw0rd" },
          result: { token: "tok_123456" },
          error: "plain",
        },
        metadata: {},
      },
    } as unknown as WebhookDelivery;
    const shown = shownDelivery(redact, delivery);
    expect(shown.payload.data).toEqual({
      jobName: "auth.login",
      args: { password: REDACTED },
      result: { token: REDACTED },
      error: "plain",
    });
    expect(delivery.payload.data.args).toEqual({ password: "p4ssw0rd" });
    expect(shownDelivery(none, delivery)).toBe(delivery);
    const other = { ...delivery, payload: { ...delivery.payload, data: { queue: "default" } } };
    expect(shownDelivery(redact, other)).toBe(other);
  });
});
