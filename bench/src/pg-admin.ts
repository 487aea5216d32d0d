/** Creating and dropping the throwaway databases every measurement runs in. */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { watchPg } from "./incidents.js";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = watchPg(new pg.Client({ connectionString: adminUrl }), "admin connection");
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
 * What the server says about the measurement's own database: sessions terminated by an operator
 * (`pg_terminate_backend`, a FORCE drop from elsewhere), ended by a fatal error, or abandoned by a client that
 * vanished. Soniq's backend and the peers reconnect silently when an idle connection dies, so this is the only
 * place such a loss shows; any of them makes the measurement INVALID. Read before the database is dropped
 * (the drop's own FORCE would count).
 */
export async function sessionTrouble(adminUrl: string, database: string): Promise<string[]> {
  const row = await withAdmin(adminUrl, async (c) => {
    const res = await c.query<{ killed: number; fatal: number; abandoned: number }>(
      `SELECT sessions_killed::int AS killed, sessions_fatal::int AS fatal, sessions_abandoned::int AS abandoned
       FROM pg_stat_database WHERE datname = $1`,
      [database],
    );
    return res.rows[0];
  });
  if (!row) return [];
  const out: string[] = [];
  if (row.killed > 0) out.push(`${row.killed} session(s) of the measurement's database were terminated`);
  if (row.fatal > 0) out.push(`${row.fatal} session(s) of the measurement's database ended by a fatal error`);
  if (row.abandoned > 0) out.push(`${row.abandoned} session(s) of the measurement's database were abandoned`);
  return out;
}

/**
 * A pool whose connections may be killed under it (the measurement's database is dropped WITH (FORCE),
 * other sessions on a shared server terminate backends). Without an 'error' listener Node would crash the
 * whole bench; this one records an incident, which makes the running measurement INVALID. A query that was
 * running rejects as well.
 */
export function benchPool(
  connectionString: string,
  max: number,
  label: string,
  config: pg.PoolConfig = {},
): pg.Pool {
  const pool = watchPg(new pg.Pool({ connectionString, max, ...config }), label);
  // A checked-out client reports a lost connection on itself (the pool only hears about idle ones).
  pool.on("connect", (client) => watchPg(client, label));
  return pool;
}

/** The session name of the harness's own connections to a measurement's database (see `harnessPool`). */
export const HARNESS_APPLICATION_NAME = "soniq-bench-harness";

/**
 * A one-connection `benchPool` for the harness's own reads of a measurement's database (the verification
 * counts, and the `settled` poll every 2 ms during a drain): its session is named `HARNESS_APPLICATION_NAME`,
 * so the store's CPU per job (db-cpu.ts) is what the system's own connections cost, not the harness's polling.
 */
export function harnessPool(connectionString: string, label: string): pg.Pool {
  return benchPool(connectionString, 1, label, { application_name: HARNESS_APPLICATION_NAME });
}

/** A dedicated connection (LISTEN, schema setup) with the same error listener as `benchPool`. */
export function benchClient(connectionString: string, label: string): pg.Client {
  return watchPg(new pg.Client({ connectionString }), label);
}
