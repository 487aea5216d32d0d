/** Creating and dropping the throwaway databases every measurement runs in. */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The same server and credentials, another database. */
export function urlForDatabase(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** `bench_<system>_<random>`: lowercase, safe as an identifier. */
export function benchDatabaseName(systemId: string): string {
  const slug = systemId.replace(/[^a-z0-9]+/g, "_");
  return `bench_${slug}_${randomBytes(4).toString("hex")}`;
}

/** Databases created and not yet dropped, so an interrupted run can still remove them. */
const live = new Map<string, string>();

export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  live.set(name, adminUrl);
  return urlForDatabase(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (c) =>
    c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`),
  );
  live.delete(name);
}

export async function dropLiveDatabases(): Promise<void> {
  await Promise.allSettled([...live].map(([name, adminUrl]) => dropDatabase(adminUrl, name)));
}

/** Fails loudly (with the server's message) when PostgreSQL cannot be reached. */
export async function serverInfo(
  adminUrl: string,
): Promise<{ version: string; settings: Record<string, string> }> {
  return withAdmin(adminUrl, async (c) => {
    const version = (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]
      ?.v;
    const names = ["shared_buffers", "synchronous_commit", "fsync", "max_connections"];
    const settings: Record<string, string> = {};
    for (const name of names) {
      const row = (await c.query<{ v: string }>("SELECT current_setting($1) AS v", [name])).rows[0];
      settings[name] = row?.v ?? "?";
    }
    return { version: version ?? "?", settings };
  });
}

/**
 * A pool whose idle connections may be killed under it (the measurement's database is dropped WITH (FORCE),
 * other sessions on a shared server terminate backends): without an 'error' listener Node would crash the
 * whole bench. A query that was running still rejects, which makes its measurement INVALID.
 */
export function benchPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on("error", () => {});
  return pool;
}
