/**
 * The Troubleshooting page's table (docs/guide/troubleshooting.md, "At a glance") quotes what users see. Every text it quotes from Soniq is produced
 * here by the code and matched (`…` in a quote stands for any text); every other quote is a tool's own text,
 * listed below. A reworded error fails this test until the page quotes the new words.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { isSoniqError, Soniq } from "@soniq/core";
import { afterAll, describe, expect, it } from "vitest";
// Internal to the SQLite backend: a missing native addon cannot be produced without breaking the install.
import { openError } from "../../../packages/backend-sqlite/src/internal/connection.js";
import { ADMIN_URL, createPostgresDatabase, tempDir } from "./support.js";

const page = readFileSync(
  fileURLToPath(new URL("../../../docs/guide/troubleshooting.md", import.meta.url)),
  "utf8",
);

/** The backtick quotes in the first column of the page's "At a glance" table. */
function symptomQuotes(): string[] {
  const section = page.split(/^## At a glance$/m)[1]?.split(/^## /m)[0] ?? "";
  const rows = section.split("\n").filter((l) => l.startsWith("|") && !/^\|\s*(symptom|-)/.test(l));
  return rows.flatMap((row) =>
    [...(row.split("|")[1] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
  );
}

/** Printed by pnpm, Node.js, node-gyp or PostgreSQL, not by Soniq; and the error codes and SQL state. */
const NOT_SONIQ_TEXT = new Set([
  "ERR_PNPM_IGNORED_BUILDS",
  "NODE_MODULE_VERSION",
  "Assertion failed: (env) != nullptr",
  "Statement::~Statement()",
  "gyp ERR!",
  "node-v… -headers.tar.gz",
  "sqlState",
  "3D000",
]);

const dir = tempDir();
const unreachable = "postgres://postgres@127.0.0.1:1/soniq";
const dbs: { drop(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.drop()));
  dir.remove();
});

async function thrown(make: () => Soniq, act: (soniq: Soniq) => Promise<unknown>): Promise<Error> {
  const soniq = make();
  try {
    await act(soniq);
  } catch (err) {
    return err as Error;
  } finally {
    await soniq.close().catch(() => {});
  }
  throw new Error("expected an error");
}

const pgApp = (url: string) => () =>
  new Soniq({ backend: postgresBackend({ connectionString: url }), allowUnknownJobNames: true });

/** Each quote as the page has it, the code it comes with, and how to make Soniq say it. */
const CASES: { quote: string; code: string; produce: () => Promise<Error> }[] = [
  {
    quote: `Cannot open the SQLite database "…": better-sqlite3's native addon is missing or was built for another Node.js version`,
    code: "SONIQ_BACKEND_ERROR",
    produce: async () => openError("./soniq.db", new Error("Could not locate the bindings file. Tried: …")),
  },
  {
    quote: "migrations.apply failed: connect ECONNREFUSED …",
    code: "SONIQ_MIGRATION_FAILED",
    produce: () => thrown(pgApp(unreachable), (s) => s.setup()),
  },
  {
    quote: "enqueue failed in PostgreSQL: connect ECONNREFUSED …",
    code: "SONIQ_BACKEND_ERROR",
    produce: () => thrown(pgApp(unreachable), (s) => s.jobs.enqueue("reports.build", {})),
  },
  {
    quote: `migrations.apply failed: database "…" does not exist`,
    code: "SONIQ_MIGRATION_FAILED",
    produce: () => {
      const url = new URL(ADMIN_URL);
      url.pathname = "/soniq_no_such_database";
      return thrown(pgApp(url.toString()), (s) => s.setup());
    },
  },
  {
    quote: "jobs.enqueue failed: no such table: soniq_jobs. The schema is missing: run soniq.setup()",
    code: "SONIQ_BACKEND_ERROR",
    produce: () =>
      thrown(
        () => new Soniq({ backend: sqliteBackend({ filename: dir.file() }), allowUnknownJobNames: true }),
        (s) => s.jobs.enqueue("reports.build", {}),
      ),
  },
  {
    quote: `enqueue failed in PostgreSQL: relation "soniq_jobs" does not exist`,
    code: "SONIQ_BACKEND_ERROR",
    produce: async () => {
      const db = await createPostgresDatabase();
      dbs.push(db);
      return thrown(pgApp(db.url), (s) => s.jobs.enqueue("reports.build", {}));
    },
  },
];

const pattern = (quote: string): RegExp =>
  new RegExp(
    quote
      .split("…")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*?"),
  );

describe("example/troubleshooting-page", () => {
  it("quotes only Soniq's texts produced below, the codes they come with, and tools' own texts", () => {
    const quotes = symptomQuotes();
    const known = new Set([...NOT_SONIQ_TEXT, ...CASES.flatMap((c) => [c.quote, c.code])]);
    expect(quotes.filter((q) => !known.has(q))).toEqual([]);
    for (const c of CASES) expect(quotes).toContain(c.quote);
  });

  for (const c of CASES) {
    it(`Soniq says: ${c.quote}`, async () => {
      const err = await c.produce();
      expect(isSoniqError(err) ? err.code : err).toBe(c.code);
      expect(err.message).toMatch(pattern(c.quote));
    }, 30_000);
  }
});
