/**
 * Issue 2's schema tests, SQLite flavour: the database itself (raw SQL, not the library) rejects
 * `dead_letter`, unknown statuses and terminal regressions; defaults and partial unique indexes hold.
 */
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let db: Database.Database;
beforeEach(async () => {
  const file = tmp.file();
  const backend = sqliteBackend({ filename: file });
  await backend.migrations.apply();
  await backend.close();
  db = new Database(file);
});
afterEach(() => db.close());

function insert(status: string, extra: Record<string, unknown> = {}): string {
  const id = randomUUID();
  const row = { id, job_name: "tests.raw", args: "{}", status, ...extra };
  const cols = Object.keys(row);
  db.prepare(
    `INSERT INTO soniq_jobs (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`,
  ).run(row);
  return id;
}

const setStatus = (id: string, status: string) =>
  db.prepare("UPDATE soniq_jobs SET status = ? WHERE id = ?").run(status, id);
const statusOf = (id: string) =>
  (db.prepare("SELECT status FROM soniq_jobs WHERE id = ?").get(id) as { status: string }).status;

describe("schema/status guards", () => {
  it("rejects inserting dead_letter with the trigger", () => {
    expect(() => insert("dead_letter")).toThrow(
      expect.objectContaining({ code: "SQLITE_CONSTRAINT_TRIGGER" }),
    );
    expect(() => insert("dead_letter")).toThrow(/soniq_dead_letter_jobs/);
    expect(db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs").get()).toEqual({ n: 0 });
  });

  it("rejects updating a row to dead_letter with the trigger", () => {
    const id = insert("processing");
    expect(() => setStatus(id, "dead_letter")).toThrow(
      expect.objectContaining({ code: "SQLITE_CONSTRAINT_TRIGGER" }),
    );
    expect(statusOf(id)).toBe("processing");
  });

  it.each(["bogus", "failed", "QUEUED", ""])("rejects the status %j with the CHECK", (status) => {
    expect(() => insert(status)).toThrow(expect.objectContaining({ code: "SQLITE_CONSTRAINT_CHECK" }));
    const id = insert("queued");
    expect(() => setStatus(id, status)).toThrow(expect.objectContaining({ code: "SQLITE_CONSTRAINT_CHECK" }));
    expect(statusOf(id)).toBe("queued");
  });

  it.each([
    ["done", "queued"],
    ["done", "processing"],
    ["cancelled", "queued"],
    ["cancelled", "processing"],
    ["cancelled", "done"],
    ["done", "cancelled"],
  ])("rejects %s -> %s in the database", (from, to) => {
    const id = insert(from);
    expect(() => setStatus(id, to)).toThrow(expect.objectContaining({ code: "SQLITE_CONSTRAINT_TRIGGER" }));
    expect(statusOf(id)).toBe(from);
  });

  it.each([
    ["queued", "processing"],
    ["processing", "done"],
    ["processing", "queued"],
    ["queued", "cancelled"],
    ["processing", "cancelled"],
    ["done", "done"],
  ])("allows %s -> %s", (from, to) => {
    const id = insert(from);
    setStatus(id, to);
    expect(statusOf(id)).toBe(to);
  });

  it("lets a terminal row change other columns", () => {
    const id = insert("done");
    db.prepare("UPDATE soniq_jobs SET result = '1' WHERE id = ?").run(id);
    expect(statusOf(id)).toBe("done");
  });
});

describe("schema/defaults", () => {
  it("fills the documented column defaults", () => {
    const before = Date.now();
    const id = randomUUID();
    db.prepare("INSERT INTO soniq_jobs (id, job_name, args) VALUES (?, 'tests.raw', '{}')").run(id);
    const row = db.prepare("SELECT * FROM soniq_jobs WHERE id = ?").get(id) as Record<string, unknown>;
    expect(row).toMatchObject({
      status: "queued",
      attempts: 0,
      max_attempts: 3,
      queue: "default",
      priority: 100,
      unique_job: 0,
      dedup_key: null,
      worker_id: null,
    });
    for (const col of ["scheduled_at", "created_at", "updated_at"]) {
      expect(Number.isInteger(row[col]), col).toBe(true);
      expect(row[col] as number).toBeGreaterThanOrEqual(before - 5);
      expect(row[col] as number).toBeLessThanOrEqual(Date.now() + 5);
    }
    db.prepare(
      `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
        dead_letter_reason, original_created_at) VALUES ('d1', 'tests.raw', '{}', 'q', 1, 3, 3, 'x', 0)`,
    ).run();
    expect(db.prepare("SELECT resurrection_count FROM soniq_dead_letter_jobs").get()).toEqual({
      resurrection_count: 0,
    });
  });
});

describe("schema/dedup index", () => {
  it("rejects a second queued row with the same dedup_key", () => {
    insert("queued", { dedup_key: "k" });
    expect(() => insert("queued", { dedup_key: "k" })).toThrow(
      expect.objectContaining({ code: "SQLITE_CONSTRAINT_UNIQUE" }),
    );
  });

  it.each(["processing", "done", "cancelled"])("allows a queued duplicate once the first is %s", (status) => {
    const first = insert("queued", { dedup_key: "k" });
    if (status === "done" || status === "cancelled") setStatus(first, "processing");
    setStatus(first, status);
    insert("queued", { dedup_key: "k" });
    expect(db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs WHERE dedup_key = 'k'").get()).toEqual({ n: 2 });
  });

  it("applies the unique-job index to queued unique rows only", () => {
    insert("queued", { unique_job: 1, args_hash: "h" });
    expect(() => insert("queued", { unique_job: 1, args_hash: "h" })).toThrow(
      expect.objectContaining({ code: "SQLITE_CONSTRAINT_UNIQUE" }),
    );
    insert("queued", { unique_job: 0, args_hash: "h" });
  });
});
