/**
 * Through the public app API: `soniq.jobs.enqueue(..., { tx })` inside a synchronous better-sqlite3
 * transaction joins it (core awaits nothing before the backend's insert), and a worker runs the job.
 */
import { Soniq } from "@soniq/core";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

// A synchronous Standard Schema validator (zod and valibot validate synchronously too).
const toSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "tests",
    validate: (value: unknown) =>
      typeof value === "object" && value !== null && typeof (value as { to?: unknown }).to === "string"
        ? { value: value as { to: string } }
        : { issues: [{ message: "to must be a string" }] },
  },
};

let db: Database.Database;
let soniq: Soniq<ReturnType<typeof sqliteBackend>>;
beforeEach(async () => {
  db = new Database(tmp.file());
  soniq = new Soniq({ backend: sqliteBackend({ database: db }) });
  await soniq.setup();
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL)");
});
afterEach(async () => {
  await soniq.close();
  db.close();
});

describe("sqlite/soniq transactional enqueue", () => {
  it("an enqueue inside the caller's transaction commits with it, and a worker runs it", async () => {
    const sent: string[] = [];
    const welcome = soniq.job(
      "emails.send_welcome",
      async (args) => void sent.push((args as { to: string }).to),
      {
        schema: toSchema,
      },
    );
    let pending: Promise<{ id: string }> | undefined;
    db.transaction(() => {
      db.prepare("INSERT INTO users (email) VALUES (?)").run("ada@example.com");
      pending = welcome.enqueue({ to: "ada@example.com" }, { tx: db });
      // Written inside the open transaction, before anything was awaited.
      expect(db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs").get()).toEqual({ n: 1 });
    })();
    const { id } = await (pending as Promise<{ id: string }>);
    expect((await soniq.jobs.get(id))?.status).toBe("queued");
    await soniq.worker({ concurrency: 2 }).runOnce();
    expect(sent).toEqual(["ada@example.com"]);
    expect((await soniq.jobs.get(id))?.status).toBe("done");
  });

  it("a rollback removes the enqueued jobs (Drizzle transaction, enqueueMany)", async () => {
    const welcome = soniq.job("emails.send_welcome", async () => undefined, { schema: toSchema });
    const orm = drizzle({ client: db });
    let pending: Promise<unknown> | undefined;
    expect(() =>
      orm.transaction((tx) => {
        tx.run("INSERT INTO users (email) VALUES ('bob@example.com')" as never);
        pending = soniq.jobs.enqueueMany(
          [
            { job: welcome, args: { to: "bob@example.com" } },
            { job: welcome, args: { to: "eve@example.com" } },
          ],
          { tx },
        );
        tx.rollback();
      }),
    ).toThrow("Rollback");
    await pending;
    expect(await soniq.jobs.stats()).toMatchObject({ total: 0 });
    expect(db.prepare("SELECT COUNT(*) AS n FROM users").get()).toEqual({ n: 0 });
  });

  it("invalid args reject and write nothing, even inside a transaction", async () => {
    const welcome = soniq.job("emails.send_welcome", async () => undefined, { schema: toSchema });
    let pending: Promise<unknown> | undefined;
    db.transaction(() => {
      pending = welcome.enqueue({ to: 42 } as never, { tx: db });
    })();
    await expect(pending).rejects.toMatchObject({ code: "SONIQ_TASK_ARGS_INVALID" });
    expect(await soniq.jobs.stats()).toMatchObject({ total: 0 });
  });
});
