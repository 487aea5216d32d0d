import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { migrationsFolder, sqliteBackend } from "../src/index.js";
import { applyMigrations } from "../src/migrations.js";
import { runFixture, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

const journalTags = [
  "0000_init",
  "0001_status_guards",
  "0002_schedule_ticks",
  "0003_queues",
  "0004_indexes",
  "0005_flows",
  "0006_progress",
  "0007_tracing",
  "0008_webhooks",
  "0009_flow_finished",
  "0010_slim_indexes",
  "0011_job_steps",
  "0012_args_version",
];

function migrationRows(file: string): { hash: string; created_at: number }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT hash, created_at FROM "__drizzle_migrations" ORDER BY created_at').all() as {
      hash: string;
      created_at: number;
    }[];
  } finally {
    db.close();
  }
}

describe("migrations", () => {
  it("resolves the drizzle folder next to src/ and dist/", () => {
    expect(migrationsFolder.replaceAll("\\", "/")).toMatch(/backend-sqlite\/drizzle$/);
  });

  it("reports pending, applies everything once, then nothing", async () => {
    const file = tmp.file();
    const first = sqliteBackend({ filename: file });
    expect(await first.migrations.status()).toEqual({ applied: [], pending: journalTags });
    expect(await first.migrations.apply()).toEqual({
      applied: journalTags,
      pending: [],
      appliedNow: journalTags,
    });
    expect(await first.migrations.status()).toEqual({ applied: journalTags, pending: [] });
    await first.close();

    const second = sqliteBackend({ filename: file });
    expect(await second.migrations.apply()).toEqual({ applied: journalTags, pending: [], appliedNow: [] });
    await second.close();
    expect(migrationRows(file)).toHaveLength(journalTags.length);
  });

  it("installs the status triggers", async () => {
    const file = tmp.file();
    const backend = sqliteBackend({ filename: file });
    await backend.migrations.apply();
    await backend.close();
    const db = new Database(file, { readonly: true });
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").all();
    db.close();
    expect(triggers).toEqual([
      { name: "soniq_jobs_reject_dead_letter_insert" },
      { name: "soniq_jobs_reject_dead_letter_update" },
      { name: "soniq_jobs_terminal_status" },
    ]);
  });

  it("three processes migrating one file at once all succeed, one row per migration", async () => {
    const file = tmp.file();
    const startAt = String(Date.now() + 2500);
    const children = [0, 1, 2].map(() => runFixture("migrate-child", [file, startAt]));
    const results = await Promise.all(children.map((c) => c.exited));
    const reports = results.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      const line = r.stdout.split("\n").find((l) => l.startsWith("REPORT "));
      return JSON.parse(String(line).slice("REPORT ".length)) as { appliedNow: string[] };
    });
    // Exactly one process applied the migrations; the others waited for its lock and found nothing to do.
    expect(reports.map((r) => r.appliedNow.length).sort()).toEqual([0, 0, journalTags.length]);
    expect(migrationRows(file)).toHaveLength(journalTags.length);
  }, 60_000);

  // drizzle's own migrator reads the last migration outside its transaction: on an upgrade, processes
  // that start together all try the pending file and all but one fail ("trigger ... already exists").
  it("three processes upgrading one file at once all succeed, one row per migration", async () => {
    const file = tmp.file();
    const firstOnly = join(tmp.dir, "first-only");
    cpSync(migrationsFolder, firstOnly, { recursive: true });
    const journalFile = join(firstOnly, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: unknown[] };
    writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, 1) }));
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    expect(applyMigrations(db, firstOnly).appliedNow).toEqual(["0000_init"]);
    db.close();

    const startAt = String(Date.now() + 2500);
    const results = await Promise.all(
      [0, 1, 2].map(() => runFixture("migrate-child", [file, startAt]).exited),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const appliedNow = results.map((r) => {
      const line = r.stdout.split("\n").find((l) => l.startsWith("REPORT "));
      return (JSON.parse(String(line).slice("REPORT ".length)) as { appliedNow: string[] }).appliedNow;
    });
    expect(appliedNow.flat()).toEqual(journalTags.slice(1));
    expect(migrationRows(file)).toHaveLength(journalTags.length);
  }, 60_000);
});
