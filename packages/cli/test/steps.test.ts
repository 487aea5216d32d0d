/**
 * Durable steps from the command line (DESIGN.md section 19): the step timeline of `jobs show` and
 * `dead-letter show` (values, signal payloads and step errors through redact), `jobs signal` (stored, woke,
 * duplicate, the typed errors) and `dead-letter replay --steps / --resolve`. The step jobs run in a worker of
 * the test process (`runOnce`), which also registers their names for replay's check.
 */
import { hostname, userInfo } from "node:os";
import type { JobStep } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { json } from "./cli.js";
import { BACKENDS, useSeededDatabase } from "./seed.js";
import { runSteps, stepApp } from "./step-jobs.js";

/** The audit actor the CLI writes: cli:<os user>@<hostname>. */
const ACTOR = `cli:${userInfo().username}@${hostname()}`;
const SECRET = /tok_live_secret|hunter2/;
const REDACT = ["--redact", "**.token"];

describe.each(BACKENDS)("soniq durable steps on %s", (_kind, makeDb) => {
  const s = useSeededDatabase(makeDb);
  const cli = s.cli;

  it("steps/show-timeline: jobs show prints the steps after the fields, values through redact", async () => {
    const local = await stepApp(s.db);
    try {
      const { id } = await local.jobs.enqueue("steps.onboard", { user: "ann" });
      await runSteps(local);
      expect((await s.app.jobs.steps(id)).map((step) => [step.name, step.state])).toEqual([
        ["create_account", "done"],
        ["approval", "waiting"],
      ]);

      const shown = await cli("jobs", "show", id, ...REDACT);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(SECRET);
      const lines = shown.stdout.split("\n");
      const at = lines.indexOf("steps (2)");
      expect(at).toBeGreaterThan(lines.findIndex((l) => /^progress\s/.test(l))); // after the job's fields
      expect(lines[at + 1]).toMatch(/^KIND\s+NAME\s+STATE\s+ATTEMPT\s+DURATION\s+WAKES\s+VALUE$/);
      expect(lines[at + 2]).toMatch(
        /^step\s+create_account\s+done\s+1\s+\d+ ms\s+-\s+\{"account":"acc_1","session":\{"token":"\[redacted\]"\}\}$/,
      );
      expect(lines[at + 3]).toMatch(
        /^signal\s+approval\s+waiting\s+1\s+-\s+\d{4}-\d\d-\d\dT[\d:.]+Z \(in (59|60) min\)\s+-$/,
      );

      const asJson = json<{ id: string; steps: JobStep[] }>(
        await cli("jobs", "show", id, "--json", ...REDACT),
      );
      expect(asJson.id).toBe(id);
      expect(asJson.steps).toEqual([
        expect.objectContaining({
          name: "create_account",
          kind: "step",
          state: "done",
          attempt: 1,
          value: { account: "acc_1", session: { token: "[redacted]" } },
          error: null,
        }),
        expect.objectContaining({ name: "approval", kind: "signal", state: "waiting", value: null }),
      ]);
      expect(JSON.stringify(asJson)).not.toMatch(SECRET);
      // Without a rule the CLI prints what is stored.
      expect((await cli("jobs", "show", id)).stdout).toContain("tok_live_secret");
      // A job without steps prints no timeline.
      const [plain] = await s.app.jobs.list({ jobName: "test.ok", limit: 1 });
      const plainShown = await cli("jobs", "show", plain?.id as string);
      expect(plainShown.stdout).not.toContain("steps (");
      expect(
        json<{ steps: unknown[] }>(await cli("jobs", "show", plain?.id as string, "--json")).steps,
      ).toEqual([]);
    } finally {
      await local.close();
    }
  });

  it("steps/signal: stored and woke, a resend with the key is a duplicate, audited; the payload is redacted when shown", async () => {
    const local = await stepApp(s.db);
    try {
      const { id } = await local.jobs.enqueue("steps.onboard", { user: "bob" });
      await runSteps(local);
      const payload = JSON.stringify({ by: "ops@example.com", token: "tok_live_secret" });
      const sent = await cli(
        "jobs",
        "signal",
        id,
        "approval",
        "--payload",
        payload,
        "--key",
        "ticket-4711",
        "--actor",
        "ops@example.com",
      );
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout.trim()).toBe(
        `stored signal approval for job ${id}; woke the job: it was waiting for approval and is due now`,
      );
      const again = await cli("jobs", "signal", id, "approval", "--payload", payload, "--key", "ticket-4711");
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(
        `duplicate signal approval for job ${id}: the key ticket-4711 was sent already; nothing changed`,
      );
      const againJson = await cli("jobs", "signal", id, "approval", "--key", "ticket-4711", "--json");
      expect(json(againJson)).toEqual({
        id,
        name: "approval",
        status: "duplicate",
        woke: false,
        deadLetter: false,
      });
      const audit = await s.app.audit.list({ action: "job.signal", limit: 3 });
      expect(audit.map((a) => [a.actor, a.target, a.outcome])).toEqual([
        [ACTOR, id, "duplicate"],
        [ACTOR, id, "duplicate"],
        ["ops@example.com", id, "ok"],
      ]);
      expect(audit[2]?.params).toMatchObject({ name: "approval", key: "ticket-4711" });
      expect(JSON.stringify(audit)).not.toMatch(SECRET); // the audit row never holds the payload

      // A signal the job is not waiting for is stored for a later wait, without waking it.
      const other = await local.jobs.enqueue("steps.onboard", { user: "cat" });
      const early = await cli("jobs", "signal", other.id, "approval", "--json");
      expect(json(early)).toEqual({
        id: other.id,
        name: "approval",
        status: "stored",
        woke: false,
        deadLetter: false,
      });

      await runSteps(local);
      expect((await s.app.jobs.get(id))?.result).toEqual({ account: "acc_1", approvedBy: "ops@example.com" });
      expect((await s.app.jobs.get(other.id))?.result).toEqual({ account: "acc_1", approvedBy: null });
      const shown = await cli("jobs", "show", id, ...REDACT);
      expect(shown.stdout).toMatch(
        /signal\s+approval\s+done\s+1\s+\d+ (ms|s)\s+-\s+\{"by":"ops@example\.com","token":"\[redacted\]"\}/,
      );
      expect(shown.stdout).not.toMatch(SECRET);

      // A done job takes no signal: the typed error, exit 1, nothing stored.
      const auditBefore = await s.app.audit.list({ action: "job.signal", limit: 1000 });
      const done = await cli("jobs", "signal", id, "approval", "--key", "late");
      expect(done.code).toBe(1);
      expect(done.stdout).toBe("");
      expect(done.stderr.trim()).toBe(
        `error [SONIQ_JOB_FINISHED] job ${id} is done: a done or cancelled job takes no signals; the signal approval was not stored.`,
      );
      const unknown = await cli("jobs", "signal", "00000000-0000-4000-8000-000000000000", "approval");
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^error \[SONIQ_JOB_NOT_FOUND\] no job or dead letter with id 0{8}-/);
      expect(await s.app.audit.list({ action: "job.signal", limit: 1000 })).toHaveLength(
        auditBefore.length + 2, // the refusals are audited (finished, not_found), nothing else
      );

      // Usage mistakes exit 2 before anything is sent; a payload that does not parse is not echoed.
      const third = await local.jobs.enqueue("steps.onboard", { user: "dan" });
      const bad = await cli("jobs", "signal", third.id, "approval", "--payload", '{"password":"hunter2"');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/^error \[SONIQ_CLI_USAGE\] --payload takes JSON/);
      expect(bad.stderr).not.toMatch(SECRET);
      const badName = await cli("jobs", "signal", third.id, "Not A Name");
      expect(badName.code).toBe(2);
      expect(badName.stderr).toMatch(/^error \[SONIQ_INVALID_ARGUMENT\] <name>: the name must match/);
      const badKey = await cli("jobs", "signal", third.id, "approval", "--key", "");
      expect(badKey.code).toBe(2);
      expect(badKey.stderr).toMatch(/--key: a non-empty string/);
      const tooBig = await cli(
        "jobs",
        "signal",
        third.id,
        "approval",
        "--payload",
        JSON.stringify("x".repeat(70_000)),
      );
      expect(tooBig.code).toBe(2);
      expect(tooBig.stderr).toMatch(
        /\[SONIQ_INVALID_ARGUMENT\] --payload: \d+ bytes as JSON, more than 65536/,
      );
      expect((await s.app.audit.list({ action: "job.signal", limit: 1000 })).length).toBe(
        auditBefore.length + 2,
      );

      const help = await cli("jobs", "signal", "--help");
      expect(help.code).toBe(0);
      for (const part of [
        "--payload <json>",
        "--key <key>",
        "--actor <actor>",
        "SONIQ_JOB_FINISHED",
        "Examples:",
      ])
        expect(help.stdout).toContain(part);
    } finally {
      await local.close();
    }
  });

  it("steps/replay: dead-letter show lists the steps (errors scrubbed); replay --resolve resumes, --steps discard starts clean", async () => {
    const local = await stepApp(s.db);
    try {
      const first = await local.jobs.enqueue("steps.charge", { order: 1 });
      const second = await local.jobs.enqueue("steps.charge", { order: 2 });
      await runSteps(local);
      expect(await s.app.deadLetters.get(first.id)).not.toBeNull();

      // The failed step quotes the reservation's token: hidden along with the value it came from.
      const shown = await cli("dead-letter", "show", first.id, ...REDACT);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(SECRET);
      expect(shown.stdout).toMatch(/step\s+reserve\s+done\s+1\s+\d+ ms\s+-\s+\{"token":"\[redacted\]"\}/);
      expect(shown.stdout).toMatch(
        /step\s+charge_card\s+failed\s+1\s+\d+ ms\s+-\s+PermanentError: card declined for \[redacted\]$/m,
      );
      expect(shown.stdout).toContain("PermanentError: card declined for [redacted]\n"); // the last error too
      const shownJson = json<{ steps: JobStep[]; lastError: string }>(
        await cli("dead-letter", "show", first.id, "--json", ...REDACT),
      );
      expect(shownJson.steps.map((step) => [step.name, step.state])).toEqual([
        ["reserve", "done"],
        ["charge_card", "failed"],
      ]);
      expect(JSON.stringify(shownJson)).not.toMatch(SECRET);

      // Usage mistakes exit 2 and replay nothing.
      const queued = () => s.app.jobs.list({ jobName: "steps.charge", status: "queued" });
      for (const args of [
        ["--resolve", "[1]"],
        ["--resolve", "{not json"],
        ["--resolve", '{"not a name": 1}'],
        ["--steps", "maybe"],
      ]) {
        const r = await cli("dead-letter", "replay", first.id, ...args);
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      }
      expect(await queued()).toEqual([]);

      const resolved = await cli(
        "dead-letter",
        "replay",
        first.id,
        "--resolve",
        '{"charge_card":{"paymentId":"manual-1"}}',
      );
      expect(resolved.code, resolved.stderr).toBe(0);
      expect(resolved.stdout.trim()).toBe("replayed 1 dead-letter job(s)");
      const [replayed] = await queued();
      const kept = await s.app.jobs.steps(replayed?.id as string);
      expect(kept).toEqual([
        expect.objectContaining({
          name: "reserve",
          state: "done",
          attempt: 1,
          value: { token: "tok_live_secret" },
        }),
        expect.objectContaining({
          name: "charge_card",
          state: "done",
          attempt: 0,
          value: { paymentId: "manual-1" },
        }),
      ]);
      const timeline = await cli("jobs", "show", replayed?.id as string, ...REDACT);
      expect(timeline.stdout).toMatch(/step\s+charge_card\s+done\s+resolved\s+.*\{"paymentId":"manual-1"\}/);
      await runSteps(local);
      expect(await s.app.jobs.get(replayed?.id as string)).toMatchObject({
        status: "done",
        result: { paid: "manual-1" },
      });

      const discarded = await cli("dead-letter", "replay", second.id, "--steps", "discard", "--json");
      expect(discarded.code, discarded.stderr).toBe(0);
      expect(json(discarded)).toEqual({ count: 1, dryRun: false });
      const [fresh] = await queued();
      expect(fresh?.id).not.toBe(replayed?.id);
      expect(await s.app.jobs.steps(fresh?.id as string)).toEqual([]);
      const [row] = await s.app.audit.list({ action: "dead_letter.replay_where", limit: 1 });
      expect(row).toMatchObject({ actor: ACTOR, outcome: "ok", details: { count: 1 } });
      expect(row?.params).toMatchObject({ ids: [second.id] });

      const help = await cli("dead-letter", "replay", "--help");
      for (const part of ["--steps <mode>", "--resolve <json>", "keep", "discard"])
        expect(help.stdout).toContain(part);
    } finally {
      await local.close();
    }
  });
});
