/**
 * Picks the database from a URL and loads only that backend: `postgres://...` loads
 * @soniq/backend-postgres and pg; `sqlite:<path>` (or no URL: the embedded default file) loads
 * @soniq/backend-sqlite and better-sqlite3. The app opens the connection itself and hands it to both
 * Soniq and its own order store, so orders and jobs can share one transaction.
 */
import type { Backend } from "@soniq/core";
import type { OrderStore } from "./orders.js";

export interface AppDatabase {
  kind: "sqlite" | "postgres";
  /** Where the data lives, for humans (the password is never shown). */
  description: string;
  backend: Backend<unknown>;
  orders: OrderStore;
  /** Closes the connection the app opened. Call it after `soniq.close()`. */
  close(): Promise<void>;
}

export interface DatabaseTarget {
  kind: "sqlite" | "postgres";
  /** A file path for SQLite, a connection string for Postgres. */
  location: string;
}

/** `postgres://` / `postgresql://` URLs, `sqlite:<path>` URLs, or the default SQLite file when unset. */
export function parseDatabaseUrl(url: string | undefined, defaultSqliteFile: string): DatabaseTarget {
  if (url === undefined || url === "") return { kind: "sqlite", location: defaultSqliteFile };
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: "postgres", location: url };
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (path === "") throw new Error("SONIQ_DATABASE_URL sqlite: needs a path, e.g. sqlite:./soniq.db");
    return { kind: "sqlite", location: path };
  }
  throw new Error(
    `SONIQ_DATABASE_URL must start with postgres://, postgresql:// or sqlite: (got "${url.split(":")[0]}:...")`,
  );
}

export async function openDatabase(target: DatabaseTarget): Promise<AppDatabase> {
  return target.kind === "postgres" ? openPostgres(target.location) : openSqlite(target.location);
}

async function openSqlite(file: string): Promise<AppDatabase> {
  const [{ default: Database }, { sqliteBackend }, { sqliteOrderStore }] = await Promise.all([
    import("better-sqlite3"),
    import("@soniq/backend-sqlite"),
    import("./orders-sqlite.js"),
  ]);
  const db = new Database(file);
  return {
    kind: "sqlite",
    description: `SQLite file ${file}`,
    // The backend sets WAL mode and a busy timeout on the connection it is handed, and never closes it.
    backend: sqliteBackend({ database: db }),
    orders: sqliteOrderStore(db),
    async close() {
      db.close();
    },
  };
}

async function openPostgres(connectionString: string): Promise<AppDatabase> {
  const [{ default: pg }, { postgresBackend }, { postgresOrderStore }] = await Promise.all([
    import("pg"),
    import("@soniq/backend-postgres"),
    import("./orders-postgres.js"),
  ]);
  const pool = new pg.Pool({ connectionString, max: 10 });
  // An idle client that dies (server restart) must not crash the app; the next query reconnects.
  pool.on("error", () => {});
  const url = new URL(connectionString);
  return {
    kind: "postgres",
    description: `PostgreSQL ${url.host}${url.pathname}`,
    // Given a pool, the backend uses it and leaves it open: the app ends it in close().
    backend: postgresBackend({ pool }),
    orders: postgresOrderStore(pool),
    close: () => pool.end(),
  };
}
