/**
 * Per-file PostgreSQL databases: each test file creates `soniq_t_<random>` on DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test) and drops it WITH (FORCE) afterwards. Connection failures
 * fail loudly; there is no silent skip.
 */
import { randomBytes } from "node:crypto";
import type { Backend } from "@soniq/core/backend";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { type PostgresBackend, postgresBackend } from "../src/index.js";

export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function urlFor(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `soniq_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: urlFor(name),
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Poll `check` until it returns true, or fail after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A database created and migrated for one test file. */
export async function createMigratedDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  const backend = postgresBackend({ connectionString: db.url });
  try {
    await backend.migrations.apply();
  } finally {
    await backend.close();
  }
  return db;
}

/** A complete `NewJob` (fresh id, due now) with overrides applied: the testkit's helper. */
export { newJob } from "@soniq/testkit";

/** Registers `id` as an active worker of every queue (claims need a registered worker id). */
export async function registerWorker(backend: Backend<unknown>, id: string): Promise<void> {
  await backend.workers.register({
    id,
    hostname: "test",
    pid: 1,
    queues: [],
    concurrency: 1,
    version: null,
    metadata: null,
  });
}

/** A test file's migrated database, an admin pool on it and a backend (each set by the file's `beforeAll`). */
export interface BackendFixture {
  db: TestDatabase;
  admin: pg.Pool;
  backend: PostgresBackend;
}

/** Makes the file's `BackendFixture` before its tests and closes and drops it after them. */
export function useMigratedBackend(): BackendFixture {
  const fx = {} as BackendFixture;
  beforeAll(async () => {
    fx.db = await createMigratedDatabase();
    fx.admin = new pg.Pool({ connectionString: fx.db.url });
    fx.admin.on("error", () => {});
    fx.backend = postgresBackend({ connectionString: fx.db.url });
  });
  afterAll(async () => {
    await fx.backend?.close();
    await fx.admin?.end();
    await fx.db?.drop();
  });
  return fx;
}
