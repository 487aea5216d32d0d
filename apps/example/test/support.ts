/** Test support: temp SQLite files, a PostgreSQL database per test file, a bounded `eventually`. */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export function tempDir(): { path: string; file(name?: string): string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "soniq-example-test-"));
  return {
    path,
    file: (name = `${randomBytes(4).toString("hex")}.db`) => join(path, name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect(); // fails loudly when PostgreSQL is down: these tests never skip
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `soniq_t_<random>` on DATABASE_URL; `drop()` removes it WITH (FORCE). */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `soniq_t_${randomBytes(6).toString("hex")}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
