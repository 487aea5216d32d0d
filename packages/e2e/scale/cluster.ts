/**
 * Private PostgreSQL 15 clusters for the scale suite: a primary (initdb into a temp dir, its own port,
 * WAL for streaming replication) and a streaming replica of it (pg_basebackup -R). Never the shared
 * server on 5432. As root, the server binaries run as the `postgres` OS user (initdb refuses root).
 * `stop()` shuts a cluster down at once (the failover's crash); `promote()` makes a replica the primary;
 * `remove()` stops it if needed and deletes its directory.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../faults/private-postgres.js";
import { postgresUser } from "./pgbouncer.js";

const BIN = "/usr/lib/postgresql/15/bin";

export interface Cluster {
  port: number;
  url(database?: string): string;
  stop(): void;
  promote(): void;
  remove(): void;
}

export interface ClusterOptions {
  /** Start as a streaming replica of this primary. */
  replicaOf?: Cluster;
  /** On a primary: commits wait until a standby flushed them (synchronous_standby_names = '*'). */
  synchronous?: boolean;
  /** On a replica: replay each commit this long after it was made (to show a lag). */
  applyDelayMs?: number;
}

function run(cmd: string, args: string[]): void {
  const owner = postgresUser();
  if (owner) execFileSync("runuser", ["-u", "postgres", "--", join(BIN, cmd), ...args], { stdio: "pipe" });
  else execFileSync(join(BIN, cmd), args, { stdio: "pipe" });
}

export async function startCluster(o: ClusterOptions = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "soniq-cluster-"));
  const data = join(dir, "data");
  const owner = postgresUser();
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chmodSync(dir, 0o700);
  }
  if (o.replicaOf) {
    run("pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(o.replicaOf.port),
      "-U",
      "postgres",
      "-D",
      data,
      "-R",
    ]);
  } else {
    run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  }
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c max_connections=100",
    "-c wal_level=replica",
    "-c max_wal_senders=5",
    // Every commit reaches a standby's disk before it returns (the primary's side of "synchronous").
    o.synchronous ? "-c synchronous_standby_names='*'" : "",
    o.applyDelayMs ? `-c recovery_min_apply_delay=${o.applyDelayMs}ms` : "",
  ].filter(Boolean);
  const options = settings.join(" ");
  const log = join(dir, "server.log");
  run("pg_ctl", ["-D", data, "-o", options, "-l", log, "-w", "start"]);
  let running = true;
  return {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop() {
      if (!running) return;
      running = false;
      run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    },
    promote: () => run("pg_ctl", ["-D", data, "-w", "promote"]),
    remove() {
      try {
        if (running) run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Runs `sql` on `url` with a one-off connection. */
export async function sqlOn<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
