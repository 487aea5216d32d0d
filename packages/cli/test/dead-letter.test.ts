import { readFile } from "node:fs/promises";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { type AuditAction, PermanentError, type Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { json, openApp, soniqOnTty, type TestDb } from "./cli.js";
import { BACKENDS, useSeededDatabase } from "./seed.js";

/** The audit actor the CLI writes: cli:<os user>@<hostname>. */
const ACTOR = `cli:${userInfo().username}@${hostname()}`;

/** The audit rows of a bulk action, newest first. */
const auditOf = (app: Soniq, action: AuditAction) => app.audit.list({ action });

/** `n` dead letters of `name` on `queue`, made by a worker in the test process. */
async function deadLettered(app: Soniq, db: TestDb, name: string, queue: string, n: number) {
  const local = await openApp(db, false);
  local.job(
    name,
    async () => {
      throw new PermanentError(`${name} fodder`);
    },
    { queue },
  );
  for (let i = 0; i < n; i++) await local.jobs.enqueue(name, { i });
  await local.worker({ queues: [queue] }).runOnce();
  await local.close();
  expect(await app.deadLetters.list({ queue })).toHaveLength(n);
}

describe.each(BACKENDS)("soniq on %s", (_kind, makeDb) => {
  const s = useSeededDatabase(makeDb);
  const cli = s.cli;

  it("dead-letter/list-and-show: filters, JSON, unknown id exits 1", async () => {
    const r = await cli("dead-letter", "list", "--reason", "permanent_failure", "--json");
    const rows = json<{ id: string; jobName: string }[]>(r);
    expect(rows.map((d) => d.jobName)).toEqual(["test.fail", "test.fail", "test.fail"]);
    const orphan = json<{ id: string; deadLetterReason: string }[]>(
      await cli("dead-letter", "list", "--name", "test.orphan", "--json"),
    );
    expect(orphan).toEqual([expect.objectContaining({ deadLetterReason: "job_not_found" })]);
    const table = await cli("dead-letter", "list", "--name", "test.orphan");
    expect(table.stdout).toMatch(
      /test\.orphan\s+orphans\s+job_not_found\s+1\/3\s+0\s+(just now|\d+ (s|min) ago)/,
    );
    const shown = await cli("dead-letter", "show", rows[0]?.id as string);
    expect(shown.stdout).toMatch(/reason\s+permanent_failure/);
    expect((await cli("dead-letter", "show", "nope")).code).toBe(1);
    expect((await cli("dead-letter", "list", "--since", "yesterday-ish")).code).toBe(2);
  });

  it("dead-letter/replay: by ids, one replay_where call and audit row; only registered names unless --force; unknown ids exit 1", async () => {
    const [fail] = await s.app.deadLetters.list({ jobName: "test.fail", limit: 1 });
    const failId = fail?.id as string;
    const queuedBefore = (await s.app.jobs.list({ jobName: "test.fail", status: "queued" })).length;
    const dry = await cli("dead-letter", "replay", failId, "--dry-run", "--json");
    expect(json(dry)).toEqual({ count: 1, dryRun: true });
    const r = await cli("dead-letter", "replay", failId.toUpperCase(), "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toEqual({ count: 1, dryRun: false });
    expect(await s.app.jobs.list({ jobName: "test.fail", status: "queued" })).toHaveLength(queuedBefore + 1);
    expect((await s.app.deadLetters.get(failId))?.resurrectionCount).toBe(1);
    const audit = await auditOf(s.app, "dead_letter.replay_where");
    expect(audit).toEqual([expect.objectContaining({ actor: ACTOR, outcome: "ok", details: { count: 1 } })]);
    expect(audit[0]?.params).toMatchObject({ ids: [failId], dryRun: false });
    expect(await auditOf(s.app, "dead_letter.replay")).toEqual([]);

    const [orphan] = await s.app.deadLetters.list({ jobName: "test.orphan" });
    const orphanId = orphan?.id as string;
    const refused = await cli("dead-letter", "replay", orphanId, failId);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\[SONIQ_CLI_REFUSED\] no worker has registered test\.orphan.*--force/);
    expect((await s.app.deadLetters.get(orphanId))?.resurrectionCount).toBe(0);
    const unknown = "00000000-0000-4000-8000-000000000000";
    const missing = await cli("dead-letter", "replay", orphanId, unknown, "nope", "--force");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /\[SONIQ_CLI_NOT_FOUND\] no dead-letter job with id 0{8}-0000-4000-8000-0{12}, nope\./,
    );
    expect((await s.app.deadLetters.get(orphanId))?.resurrectionCount).toBe(0);
    const forced = await cli("dead-letter", "replay", orphanId, "--force");
    expect(forced.code).toBe(0);
    expect(forced.stdout.trim()).toBe("replayed 1 dead-letter job(s)");
    expect((await s.app.deadLetters.get(orphanId))?.resurrectionCount).toBe(1);

    const tooMany = Array.from(
      { length: 1001 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    );
    const over = await cli("dead-letter", "purge", ...tooMany);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(
      /\[SONIQ_CLI_USAGE\] pass at most 1000 dead-letter ids at a time \(got 1001\)/,
    );
    expect((await cli("dead-letter", "replay")).code).toBe(2);
    expect((await cli("dead-letter", "replay", "--name", "test.fail")).code).toBe(2);
  });

  it("dead-letter/bulk-dry-run: prints the count, changes nothing, writes no audit row", async () => {
    const auditBefore = await s.app.audit.list();
    const jobsBefore = await s.app.jobs.list();
    const r = await cli("dead-letter", "replay", "--all", "--name", "test.fail", "--dry-run");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("would replay 3 dead-letter job(s)");
    const orphans = await cli("dead-letter", "replay", "--all", "--queue", "orphans", "--dry-run");
    expect(orphans.stdout.trim()).toBe("would replay 1 dead-letter job(s)"); // the dry run needs no --force
    const asJson = await cli(
      "dead-letter",
      "purge",
      "--all",
      "--reason",
      "permanent_failure",
      "--dry-run",
      "--json",
    );
    expect(json(asJson)).toEqual({ count: 3, dryRun: true });
    expect(await s.app.deadLetters.list({ jobName: "test.fail" })).toHaveLength(3);
    expect(await s.app.jobs.list()).toEqual(jobsBefore);
    expect(await s.app.audit.list()).toEqual(auditBefore);
  });

  it("dead-letter/replay-all: refused for unregistered names, then one replay_where audit row with the count", async () => {
    const whereBefore = await auditOf(s.app, "dead_letter.replay_where"); // the by-ids replays above
    const refused = await cli("dead-letter", "replay", "--all", "--queue", "orphans", "--yes");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\[SONIQ_CLI_REFUSED\] no worker has registered test\.orphan.*--force/);
    expect(await auditOf(s.app, "dead_letter.replay_where")).toEqual(whereBefore);

    const queuedBefore = (await s.app.jobs.list({ jobName: "test.fail", status: "queued" })).length;
    const perIdBefore = await auditOf(s.app, "dead_letter.replay");
    const r = await cli("dead-letter", "replay", "--all", "--name", "test.fail", "--yes");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("replayed 3 dead-letter job(s)");
    expect(await s.app.jobs.list({ jobName: "test.fail", status: "queued" })).toHaveLength(queuedBefore + 3);
    const rows = await auditOf(s.app, "dead_letter.replay_where");
    expect(rows).toEqual([
      expect.objectContaining({ actor: ACTOR, outcome: "ok", target: null, details: { count: 3 } }),
      ...whereBefore,
    ]);
    expect(rows[0]?.params).toMatchObject({ jobName: "test.fail", dryRun: false });
    // Replaying keeps the rows; no per-id audit rows for a bulk replay.
    expect(await s.app.deadLetters.list({ jobName: "test.fail" })).toHaveLength(3);
    expect(await auditOf(s.app, "dead_letter.replay")).toEqual(perIdBefore);

    const forced = await cli(
      "dead-letter",
      "replay",
      "--all",
      "--queue",
      "orphans",
      "--yes",
      "--force",
      "--json",
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect(json(forced)).toEqual({ count: 1, dryRun: false });
    expect((await auditOf(s.app, "dead_letter.replay_where"))[0]).toMatchObject({ details: { count: 1 } });
  });

  it("dead-letter/purge-all: refused without --yes off a TTY (exit 1, nothing changed), done with it", async () => {
    await deadLettered(s.app, s.db, "test.purge_me", "purge", 2);
    await deadLettered(s.app, s.db, "test.keep_me", "kept", 1);

    const refused = await cli("dead-letter", "purge", "--all", "--queue", "purge");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /\[SONIQ_CLI_REFUSED\] refusing to purge 2 dead-letter job\(s\) without confirmation: pass --yes/,
    );
    expect(await s.app.deadLetters.list({ queue: "purge" })).toHaveLength(2);
    expect(await auditOf(s.app, "dead_letter.purge_where")).toEqual([]);

    const done = await cli("dead-letter", "purge", "--all", "--queue", "purge", "--yes", "--json");
    expect(done.code, done.stderr).toBe(0);
    expect(json(done)).toEqual({ count: 2, dryRun: false });
    expect(await s.app.deadLetters.list({ queue: "purge" })).toHaveLength(0);
    expect(await s.app.deadLetters.list({ queue: "kept" })).toHaveLength(1);
    const rows = await auditOf(s.app, "dead_letter.purge_where");
    expect(rows).toEqual([
      expect.objectContaining({ actor: ACTOR, outcome: "ok", target: null, details: { count: 2 } }),
    ]);
    expect(rows[0]?.params).toMatchObject({ queue: "purge", dryRun: false });
    expect(await auditOf(s.app, "dead_letter.purge")).toEqual([]); // one row for the action, none per id

    const human = await cli("dead-letter", "purge", "--all", "--queue", "kept", "--yes");
    expect(human.stdout.trim()).toBe("purged 1 dead-letter job(s)");
    expect((await cli("dead-letter", "purge", "00000000-0000-4000-8000-000000000000")).code).toBe(1);
  });

  it("dead-letter/tty-confirm: on a terminal a bulk purge asks; no keeps the rows (exit 1), yes purges", async () => {
    await deadLettered(s.app, s.db, "test.tty_me", "tty", 1);
    const auditBefore = await s.app.audit.list();
    const args = ["dead-letter", "purge", "--all", "--queue", "tty", "--database-url", s.db.url];
    const no = await soniqOnTty(args, "n\n", { cwd: s.db.dir });
    expect(no.stdout).toContain("purge 1 dead-letter job(s)? [y/N]");
    expect(no.code).toBe(1);
    expect(await s.app.deadLetters.list({ queue: "tty" })).toHaveLength(1);
    expect(await s.app.audit.list()).toEqual(auditBefore);
    const yes = await soniqOnTty(args, "y\n", { cwd: s.db.dir });
    expect(yes.code, yes.stdout).toBe(0);
    expect(yes.stdout).toContain("purged 1 dead-letter job(s)");
    expect(yes.stdout).toContain("purging [##############################] 1/1"); // the progress bar
    expect(await s.app.deadLetters.list({ queue: "tty" })).toHaveLength(0);
    expect((await s.app.audit.list())[0]).toMatchObject({
      action: "dead_letter.purge_where",
      actor: ACTOR,
      params: expect.objectContaining({ queue: "tty" }),
      details: { count: 1 },
    });
  });

  it("dead-letter/export: JSON lines or CSV to --output, the count on stderr", async () => {
    const jsonl = join(s.db.dir, "dead.jsonl");
    const r = await cli("dead-letter", "export", "--name", "test.fail", "--output", jsonl);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`exported 3 dead-letter job(s) to ${jsonl}`);
    const lines = (await readFile(jsonl, "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { jobName: string }).jobName)).toEqual([
      "test.fail",
      "test.fail",
      "test.fail",
    ]);
    const csv = await cli("dead-letter", "export", "--name", "test.fail", "--format", "csv");
    expect(csv.stdout).toMatch(/^id,jobName,queue,priority,attempts,maxAttempts,deadLetterReason/);
    // One record per dead letter; the multi-line last errors are quoted cells.
    for (const row of await s.app.deadLetters.list({ jobName: "test.fail" })) {
      expect(csv.stdout).toContain(`\n${row.id},test.fail,failing,`);
    }
    expect(csv.stderr).toContain("exported 3 dead-letter job(s)");
    const local = await openApp(s.db, false);
    local.job(
      "test.formula",
      async () => {
        throw '=HYPERLINK("http://evil.example","details")';
      },
      { queue: "formulas", maxAttempts: 1 },
    );
    await local.jobs.enqueue("test.formula", {});
    await local.worker({ queues: ["formulas"] }).runOnce();
    await local.close();
    const formula = await cli("dead-letter", "export", "--queue", "formulas", "--format", "csv");
    expect(formula.stdout).toContain(`"'=HYPERLINK(""http://evil.example"",""details"")"`);
    expect(formula.stdout).not.toMatch(/,"?=HYPERLINK/);
    await s.app.deadLetters.purgeWhere({ queue: "formulas" });
    const nowhere = await cli("dead-letter", "export", "--output", join(s.db.dir, "no", "such", "dir.jsonl"));
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/^error \[SONIQ_CLI_OUTPUT\] cannot write .*dir\.jsonl: ENOENT/);
  });

  it("dead-letter/show-args-version: the dead letter's args version, or unversioned; --json carries it", async () => {
    const local = await openApp(s.db, false);
    local.job(
      "test.versioned",
      async () => {
        throw new PermanentError("versioned fodder");
      },
      { queue: "versioned", version: 2 },
    );
    const { id } = await local.jobs.enqueue("test.versioned", { to: "ann@example.com" });
    await local.worker({ queues: ["versioned"] }).runOnce();
    await local.close();
    const shown = await cli("dead-letter", "show", id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^args version\s+2$/m);
    expect(json<{ argsVersion: unknown }>(await cli("dead-letter", "show", id, "--json")).argsVersion).toBe(
      2,
    );
    // The seed's dead letters were enqueued by name without a version.
    const [orphan] = await s.app.deadLetters.list({ jobName: "test.orphan" });
    const orphanId = orphan?.id as string;
    expect((await cli("dead-letter", "show", orphanId)).stdout).toMatch(/^args version\s+unversioned$/m);
    expect(
      json<{ argsVersion: unknown }>(await cli("dead-letter", "show", orphanId, "--json")).argsVersion,
    ).toBeNull();
  });
});
