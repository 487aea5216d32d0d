/**
 * One PostgreSQL database per test file: `soniq_dash_<random>` on DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), dropped WITH (FORCE) afterwards. No silent skip: a
 * database that does not answer fails the file.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export async function createDatabase(prefix = "soniq_dash"): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
