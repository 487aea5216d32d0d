/**
 * A private PgBouncer for the scale suite: its own port, config, auth file and log in a temp dir, in
 * transaction mode, in front of one PostgreSQL server (the shared one on 5432 or a private cluster). The
 * test starts it and stops it; `repoint` rewrites the target and RELOADs (the failover step). When Debian's
 * `pgbouncer` is not installed the start fails with the command that installs it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBackend } from "@soniq/backend-postgres";
import pg from "pg";
import { freePort } from "../faults/private-postgres.js";
import { type BackendKind, postgresKind } from "../test/runtime-support.js";

const CANDIDATES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"];

export interface PgBouncer {
  /** postgres:// URL of `database` through the pooler. */
  url(database: string): string;
  port: number;
  /** Point every database at another server and RELOAD (clients keep their pooler connections). */
  repoint(host: string, port: number): Promise<void>;
  /** The pooler's own log (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  host?: string;
  port?: number;
  /** Server connections per database/user pair (default 20). */
  poolSize?: number;
  /** Address to listen on (default 127.0.0.1; "0.0.0.0" for the worker-host namespaces). */
  listenAddr?: string;
  /** Databases named in the config (RELOAD re-points these reliably); others go through `*`. */
  databases?: string[];
}

function binary(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      "pgbouncer is not installed: the pooler tests need Debian's pgbouncer 1.18+ (`apt-get install -y pgbouncer`; .ci/run installs it)",
    );
  }
  return found;
}

function config(
  dir: string,
  port: number,
  target: { host: string; port: number },
  o: PgBouncerOptions,
): string {
  const named = (o.databases ?? []).map(
    (d) => `${d} = host=${target.host} port=${target.port} dbname=${d}\n`,
  );
  return `[databases]
${named.join("")}* = host=${target.host} port=${target.port}

[pgbouncer]
listen_addr = ${o.listenAddr ?? "127.0.0.1"}
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "userlist.txt")}
admin_users = postgres
pool_mode = transaction
default_pool_size = ${o.poolSize ?? 20}
max_client_conn = 1000
server_check_delay = 0
; a lost host's connections can be mid-transaction when its network goes (no RST reaches the pooler):
; without this they hold server connections, idle in transaction, until TCP gives up
idle_transaction_timeout = 10
server_login_retry = 1
ignore_startup_parameters = extra_float_digits,options
logfile = ${join(dir, "pgbouncer.log")}
pidfile = ${join(dir, "pgbouncer.pid")}
`;
}

/** As root, the postgres OS user runs the servers and the pooler (initdb and pgbouncer refuse root). */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

export async function startPgBouncer(o: PgBouncerOptions = {}): Promise<PgBouncer> {
  const bin = binary();
  const dir = mkdtempSync(join(tmpdir(), "soniq-pgbouncer-"));
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  const write = (target: { host: string; port: number }) => writeFileSync(ini, config(dir, port, target, o));
  writeFileSync(join(dir, "userlist.txt"), '"postgres" ""\n');
  write({ host: o.host ?? "127.0.0.1", port: o.port ?? 5432 });
  const owner = postgresUser();
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    for (const f of ["pgbouncer.ini", "userlist.txt"]) chownSync(join(dir, f), owner.uid, owner.gid);
    chmodSync(dir, 0o700);
  }
  const proc: ChildProcess = spawn(bin, [ini], { stdio: "ignore", ...owner });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const log = () => {
    try {
      return readFileSync(join(dir, "pgbouncer.log"), "utf8");
    } catch {
      return "";
    }
  };
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = async (command: string) => {
    const client = new pg.Client({ connectionString: url("pgbouncer") });
    await client.connect();
    try {
      await client.query({ text: command, queryMode: "simple" } as pg.QueryConfig);
    } finally {
      await client.end();
    }
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await admin("SHOW VERSION");
      break;
    } catch (err) {
      if (proc.exitCode !== null || Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`pgbouncer did not start on port ${port}: ${String(err)}\n${log()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  let stopped: Promise<void> | undefined;
  return {
    port,
    url,
    log,
    async repoint(host, targetPort) {
      write({ host, port: targetPort });
      if (owner) chownSync(ini, owner.uid, owner.gid);
      await admin("RELOAD");
      // Server connections to the old target are closed once idle; new ones go to the new target.
      await admin("RECONNECT");
    },
    stop() {
      stopped ??= (async () => {
        if (proc.exitCode === null) {
          proc.kill("SIGTERM");
          // SIGTERM: pgbouncer 1.18 shuts down at once.
          await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
          if (proc.exitCode === null) proc.kill("SIGKILL");
        }
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/**
 * The `postgresKind` of the e2e suites, reached through a private PgBouncer in transaction mode started in
 * `setup` and stopped in `teardown`: the same scenarios run unchanged through the pooler. Backends and
 * child processes use the defaults (named statements "auto", listen "auto", so they fall back to polling).
 */
export function pooledPostgresKind(): BackendKind {
  const direct = postgresKind();
  const database = new URL(direct.target()).pathname.slice(1);
  let bouncer: PgBouncer | undefined;
  const target = () => {
    if (!bouncer) throw new Error("pooledPostgresKind: setup() has not started PgBouncer");
    return bouncer.url(database);
  };
  return {
    name: "postgres-pgbouncer",
    async setup() {
      await direct.setup();
      bouncer = await startPgBouncer();
    },
    create: () => postgresBackend({ connectionString: target() }),
    createPeer: () => postgresBackend({ connectionString: target() }),
    target,
    log: () => bouncer?.log() ?? "",
    async teardown() {
      await bouncer?.stop();
      await direct.teardown();
    },
  };
}
