/** What the operator surfaces share from `@soniq/core/ops`: typed durations and instants, the replay check, redaction. */
import { describe, expect, it } from "vitest";
import { type Explanation, PermanentError, type WebhookDelivery } from "../src/index.js";
import { createRedactor, REDACTED } from "../src/observability/redact.js";
import {
  parseDuration,
  parsePastInstant,
  replayRefusal,
  searchFilter,
  shownDelivery,
  shownExplanation,
  shownExplanationOf,
  shownSchedule,
} from "../src/ops.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();

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
    expect(shownExplanation(none, explanation, row)).toBe(explanation);
  });

  it("ops/shown-explanation-fails-closed: evidence with no row it came from shows no error text", () => {
    const explanation: Explanation = {
      status: "held",
      verdict: "held",
      reasons: [
        {
          code: "held_by_dead_letter",
          message: "held",
          evidence: {
            deadLetterId: "0193c6e2-0000-7000-8000-000000000001",
            lastError: "denied for p4ssw0rd",
          },
        },
        { code: "retry_backoff", message: "retrying", evidence: { lastError: "denied for p4ssw0rd" } },
      ],
    };
    const shown = shownExplanation(redact, explanation, null);
    expect(JSON.stringify(shown)).not.toContain("p4ssw0rd");
    expect(shown.reasons.map((r) => r.evidence.lastError)).toEqual([REDACTED, REDACTED]);
    // The held step's parent, given: its last error is scrubbed of that row's secrets.
    const parent = {
      id: "0193c6e2-0000-7000-8000-000000000001",
      jobName: "auth.login",
      args: { password: "p4ssw0rd" },
      lastError: "denied for p4ssw0rd",
    };
    const held = shownExplanation(redact, explanation, null, [parent]);
    expect(held.reasons[0]?.evidence.lastError).toBe(`denied for ${REDACTED}`);
  });

  it("ops/shown-explanation-of: a flow step held by a dead-lettered parent quotes no secret of the parent", async () => {
    const soniq = app({ redact: ["password"] });
    soniq.job("auth.login", async (args: { password: string }) => {
      throw new PermanentError(`login failed for ${args.password}`);
    });
    soniq.job("auth.after", async () => 1);
    const flow = await soniq.flows.start({
      steps: {
        a: { job: "auth.login", args: { password: "hunter2-secret" } },
        b: { job: "auth.after", dependsOn: ["a"] },
      },
    });
    await soniq.worker().runOnce();
    const raw = await soniq.jobs.explain(flow.jobs.b as string);
    expect(raw.verdict).toBe("held");
    expect(JSON.stringify(raw)).toContain("hunter2-secret");
    const shown = await shownExplanationOf(soniq, flow.jobs.b as string);
    expect(shown.verdict).toBe("held");
    expect(JSON.stringify(shown)).not.toContain("hunter2");
    expect(shown.reasons[0]?.evidence.lastError).toContain(`login failed for ${REDACTED}`);
    // The dead letter explained itself: redacted against its own row.
    const dead = await shownExplanationOf(soniq, flow.jobs.a as string);
    expect(dead.verdict).toBe("dead_lettered");
    expect(JSON.stringify(dead)).not.toContain("hunter2");
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

describe("ops/search", () => {
  const id = "0193C6E2-0000-7000-8000-000000000001";

  it("ops/search-filter: core's text search without redaction; an id or an exact job name while redacting", () => {
    expect(searchFilter({ queue: "q1" }, undefined, true)).toEqual({ queue: "q1" });
    expect(searchFilter({ queue: "q1" }, "hunter2", false)).toEqual({ queue: "q1", q: "hunter2" });
    expect(searchFilter({ queue: "q1" }, "hunter2", true)).toEqual({ queue: "q1", jobName: "hunter2" });
    expect(searchFilter({}, id, true)).toEqual({ ids: [id.toLowerCase()] });
    expect(searchFilter({ jobName: "a.job" }, "a.job", true)).toEqual({ jobName: "a.job" });
    // What cannot match alongside the filter's own name or ids matches nothing.
    expect(searchFilter({ jobName: "a.job" }, "b.job", true)).toEqual({ jobName: "a.job", ids: [] });
    expect(searchFilter({ ids: ["0193c6e2-0000-7000-8000-000000000002"] }, id, true)).toEqual({ ids: [] });
    expect(searchFilter({ jobName: undefined }, "a.job", true)).toEqual({ jobName: "a.job" });
  });

  it("ops/search-oracle: a prefix of a redacted secret finds no row while redacting; the id still does", async () => {
    for (const redacting of [false, true]) {
      const soniq = app(redacting ? { redact: ["password"] } : {});
      soniq.job("auth.login", async (args: { password: string }) => {
        throw new PermanentError(`password ${args.password}`);
      });
      const { id: jobId } = await soniq.jobs.enqueue("auth.login", { password: "hunter2-secret" });
      await soniq.worker().runOnce();
      const r = soniq.options.redact.active;
      const found = await soniq.deadLetters.list(searchFilter({}, "password hunter2-s", r));
      expect(found.length, `redacting: ${redacting}`).toBe(redacting ? 0 : 1);
      const count = await soniq.deadLetters.purgeWhere(searchFilter({}, "hunter2-s", r), { dryRun: true });
      expect(count.count).toBe(redacting ? 0 : 1);
      expect((await soniq.deadLetters.list(searchFilter({}, jobId, r))).map((d) => d.id)).toEqual([jobId]);
      expect(await soniq.deadLetters.list(searchFilter({}, "auth.login", r))).toHaveLength(1);
    }
  });
});
