/**
 * Database CPU time of one measurement, for W7: the CPU the PostgreSQL server processes serving the
 * measurement's database used over a window, read from /proc (the server runs on this machine).
 *
 * Every 250 ms the sampler lists the backends of the database (`pg_stat_activity`: the system's producer
 * and worker connections and autovacuum workers on that database; not the harness's own count and `settled`
 * queries, whose sessions are named `HARNESS_APPLICATION_NAME`, see pg-admin.ts) and reads
 * each one's CPU time: `/proc/<pid>/schedstat` (nanoseconds on CPU), else `utime + stime` of
 * `/proc/<pid>/stat` (clock ticks, 100 per second). A backend already there at the start counts from its
 * reading then, one that appears later from zero (it was born in the window). A backend that exits between
 * two samples loses at most 250 ms of its time. Server-wide processes (WAL writer, checkpointer, background
 * writer) serve every database and are not counted. Not available (null) when the server's processes are not
 * visible here (a remote server, another PID namespace: every pid must be a process named `postgres`).
 */
import { readFileSync } from "node:fs";
import type pg from "pg";
import { benchClient, HARNESS_APPLICATION_NAME } from "./pg-admin.js";

const SAMPLE_MS = 250;
const CLOCK_TICKS_PER_SECOND = 100;

/** Seconds on CPU so far, or null when the process is gone or not a PostgreSQL process. */
export function processCpuSeconds(pid: number): number | null {
  try {
    if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") return null;
  } catch {
    return null;
  }
  try {
    const ns = Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
    if (Number.isFinite(ns)) return ns / 1e9;
  } catch {
    // No schedstat on this kernel: fall back to stat.
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export interface DbCpuSampler {
  /** Takes a last sample and returns the CPU seconds used since the start. */
  stop(): Promise<number>;
}

class Sampler implements DbCpuSampler {
  private readonly base = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: pg.Client,
    private readonly database: string,
  ) {}

  async sample(first: boolean): Promise<void> {
    const res = await this.client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name IS DISTINCT FROM $2",
      [this.database, HARNESS_APPLICATION_NAME],
    );
    for (const { pid } of res.rows) {
      const cpu = processCpuSeconds(pid);
      if (cpu === null) continue;
      if (!this.base.has(pid)) this.base.set(pid, first ? cpu : 0);
      this.last.set(pid, cpu);
    }
  }

  start(): void {
    this.timer = setInterval(() => {
      this.sampling = this.sampling.then(() => this.sample(false)).catch(() => {});
    }, SAMPLE_MS);
    this.timer.unref();
  }

  async stop(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    await this.sampling;
    try {
      await this.sample(false);
    } finally {
      await this.client.end();
    }
    let total = 0;
    for (const [pid, cpu] of this.last) total += cpu - (this.base.get(pid) ?? 0);
    return total;
  }
}

/** Starts sampling the backends of `database`; null when their CPU time cannot be read here. */
export async function startDbCpu(adminUrl: string, database: string): Promise<DbCpuSampler | null> {
  const client = benchClient(adminUrl, "database CPU sampler");
  await client.connect();
  const own = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
  if (own === undefined || processCpuSeconds(own) === null) {
    await client.end();
    return null;
  }
  const sampler = new Sampler(client, database);
  await sampler.sample(true);
  sampler.start();
  return sampler;
}

/**
 * The server's WAL insert position in bytes. Server-wide: every database's writes move it, so a WAL figure
 * is this measurement's only on an otherwise idle server.
 */
export async function walPosition(adminUrl: string): Promise<number> {
  const client = benchClient(adminUrl, "WAL position");
  await client.connect();
  try {
    const res = await client.query<{ b: string }>(
      "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS b",
    );
    return Number(res.rows[0]?.b);
  } finally {
    await client.end();
  }
}
