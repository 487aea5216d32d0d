import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PermanentError } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { json, openApp, soniqOnTty } from "./cli.js";
import { BACKENDS, useSeededDatabase } from "./seed.js";

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

  it("dead-letter/replay: by id, only registered names unless --force, unknown id exits 1", async () => {
    const [fail] = await s.app.deadLetter.list({ jobName: "test.fail", limit: 1 });
    const r = await cli("dead-letter", "replay", fail?.id as string, "--json");
    expect(r.code, r.stderr).toBe(0);
    const replayed = json<{ id: string; newId: string }[]>(r);
    expect(replayed).toHaveLength(1);
    const newId = replayed[0]?.newId as string;
    expect((await s.app.getJob(newId))?.status).toBe("queued");
    expect((await s.app.deadLetter.get(fail?.id as string))?.resurrectionCount).toBe(1);

    const [orphan] = await s.app.deadLetter.list({ jobName: "test.orphan" });
    const refused = await cli("dead-letter", "replay", orphan?.id as string);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\[SONIQ_CLI_REFUSED\] no worker has registered test\.orphan.*--force/);
    expect((await s.app.deadLetter.get(orphan?.id as string))?.resurrectionCount).toBe(0);
    const forced = await cli("dead-letter", "replay", orphan?.id as string, "--force");
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^replayed \S+ as \S+/);

    expect((await cli("dead-letter", "replay", "00000000-0000-4000-8000-000000000000")).code).toBe(1);
    expect((await cli("dead-letter", "replay")).code).toBe(2);
    expect((await cli("dead-letter", "replay", "--name", "test.fail")).code).toBe(2);
  });

  it("dead-letter/bulk-dry-run: prints the count and changes nothing", async () => {
    const r = await cli("dead-letter", "replay", "--all", "--name", "test.fail", "--dry-run");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("would replay 3 dead-letter job(s)");
    const asJson = await cli(
      "dead-letter",
      "purge",
      "--all",
      "--reason",
      "permanent_failure",
      "--dry-run",
      "--json",
    );
    expect(json(asJson)).toEqual({ count: 3 });
    expect(await s.app.deadLetter.list({ jobName: "test.fail" })).toHaveLength(3);
  });

  it("dead-letter/purge-all: refused without --yes off a TTY (exit 1, nothing changed), done with it", async () => {
    const local = await openApp(s.db, false);
    local.job(
      "test.purge_me",
      async () => {
        throw new PermanentError("purge fodder");
      },
      { queue: "purge" },
    );
    for (let i = 0; i < 2; i++) await local.enqueue("test.purge_me", { i });
    await local.worker({ queues: ["purge"] }).runOnce();
    await local.close();
    expect(await s.app.deadLetter.list({ queue: "purge" })).toHaveLength(2);

    const refused = await cli("dead-letter", "purge", "--all", "--queue", "purge");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /\[SONIQ_CLI_REFUSED\] refusing to purge 2 dead-letter job\(s\) without confirmation: pass --yes/,
    );
    expect(await s.app.deadLetter.list({ queue: "purge" })).toHaveLength(2);

    const done = await cli("dead-letter", "purge", "--all", "--queue", "purge", "--yes", "--json");
    expect(done.code).toBe(0);
    expect(json<{ purged: boolean }[]>(done).map((r) => r.purged)).toEqual([true, true]);
    expect(await s.app.deadLetter.list({ queue: "purge" })).toHaveLength(0);
    expect((await cli("dead-letter", "purge", "00000000-0000-4000-8000-000000000000")).code).toBe(1);
  });

  it("dead-letter/tty-confirm: on a terminal a bulk purge asks; no keeps the rows (exit 1), yes purges", async () => {
    const local = await openApp(s.db, false);
    local.job(
      "test.tty_me",
      async () => {
        throw new PermanentError("tty fodder");
      },
      { queue: "tty" },
    );
    await local.enqueue("test.tty_me", {});
    await local.worker({ queues: ["tty"] }).runOnce();
    await local.close();
    const args = ["dead-letter", "purge", "--all", "--queue", "tty", "--database-url", s.db.url];
    const no = await soniqOnTty(args, "n\n", { cwd: s.db.dir });
    expect(no.stdout).toContain("purge 1 dead-letter job(s)? [y/N]");
    expect(no.code).toBe(1);
    expect(await s.app.deadLetter.list({ queue: "tty" })).toHaveLength(1);
    const yes = await soniqOnTty(args, "y\n", { cwd: s.db.dir });
    expect(yes.code, yes.stdout).toBe(0);
    expect(yes.stdout).toContain("purged 1 dead-letter job(s)");
    expect(yes.stdout).toContain("purging [##############################] 1/1"); // the progress bar
    expect(await s.app.deadLetter.list({ queue: "tty" })).toHaveLength(0);
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
    for (const row of await s.app.deadLetter.list({ jobName: "test.fail" })) {
      expect(csv.stdout).toContain(`\n${row.id},test.fail,failing,`);
    }
    expect(csv.stderr).toContain("exported 3 dead-letter job(s)");
    const nowhere = await cli("dead-letter", "export", "--output", join(s.db.dir, "no", "such", "dir.jsonl"));
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/^error \[SONIQ_CLI_OUTPUT\] cannot write .*dir\.jsonl: ENOENT/);
  });
});
