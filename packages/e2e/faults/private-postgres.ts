/**
 * A throwaway PostgreSQL 15 server for the restart scenario: initdb into a temp dir, started with pg_ctl on
 * a free port, restarted and finally stopped and deleted by the suite. The shared server on 5432 is never
 * touched. As root, the server binaries run as the `postgres` OS user (initdb refuses root).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BIN = "/usr/lib/postgresql/15/bin";

/** A free TCP port on the loopback (each private server and pooler listens on its own). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface PrivatePostgres {
  url: string;
  /** A clean restart (`-m fast`): sessions end, every commit is on disk first. */
  restart(): void;
  /**
   * A crash and a restart: `-m immediate` ends the server without writing its WAL buffers, so the last
   * asynchronous commits (the claims) are lost, as after a power cut; crash recovery runs at the start.
   */
  crash(): void;
  stop(): void;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), "soniq-private-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const run = (cmd: string, args: string[]) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", join(BIN, cmd), ...args], { stdio: "pipe" })
      : execFileSync(join(BIN, cmd), args, { stdio: "pipe" });
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = await freePort();
  // The WAL writer wakes every 10 s (its longest delay): asynchronous commits wait for the next synchronous one.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50 -c wal_writer_delay=10s`;
  const log = join(dir, "server.log");
  run("pg_ctl", ["-D", data, "-o", options, "-l", log, "-w", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => run("pg_ctl", ["-D", data, "-o", options, "-l", log, "-m", "fast", "-w", "restart"]),
    crash: () => {
      run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      run("pg_ctl", ["-D", data, "-o", options, "-l", log, "-w", "start"]);
    },
    stop: () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
