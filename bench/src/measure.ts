/**
 * One measurement = one system, one workload, one fresh database (or SQLite file), one worker host child.
 * Everything it creates is removed afterwards, whatever happened.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostClient } from "./host-client.js";
import { takeIncidents } from "./incidents.js";
import {
  benchDatabaseName,
  createDatabase,
  dropDatabase,
  dropLiveDatabases,
  sessionTrouble,
} from "./pg-admin.js";
import { localProducer, type ProducerHandle } from "./producer.js";
import { deleteRedisPrefix } from "./redis-admin.js";
import type { SystemAdapter, SystemTarget } from "./systems/types.js";

/** A run whose check failed: reported as INVALID and never timed. */
export class InvalidRun extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "InvalidRun";
  }
}

export function check(condition: boolean, reason: string): void {
  if (!condition) throw new InvalidRun(reason);
}

export interface MeasureContext {
  system: SystemAdapter;
  target: SystemTarget;
  /** The measurement's database (Postgres systems), for server-side readings; null otherwise. */
  database: string | null;
  adminUrl: string;
  producer: ProducerHandle;
  /** The worker host (started on demand; always present for in-process systems). */
  host(): Promise<HostClient>;
  /** `count` worker hosts, each its own process on the same storage; the first is `host()` (scale-out). */
  hosts(count: number): Promise<HostClient[]>;
}

/** Removes a SQLite file and its companions. */
function removeSqliteFiles(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${path}${suffix}`, { force: true });
}

/** SQLite files in use, so an interrupted run can still remove them (databases: see pg-admin). */
const liveSqliteFiles = new Set<string>();

/** Drops every database and removes every SQLite file of measurements still running (Ctrl-C, crash). */
export async function cleanupLiveTargets(): Promise<void> {
  for (const path of liveSqliteFiles) removeSqliteFiles(path);
  liveSqliteFiles.clear();
  await dropLiveDatabases();
}

interface Target {
  target: SystemTarget;
  database: string | null;
  cleanup: () => Promise<void>;
}

async function makeTarget(system: SystemAdapter, adminUrl: string): Promise<Target> {
  const name = benchDatabaseName(system.id);
  if (system.storage === "postgres") {
    const databaseUrl = await createDatabase(adminUrl, name);
    return {
      target: { databaseUrl, sqlitePath: null },
      database: name,
      cleanup: () => dropDatabase(adminUrl, name),
    };
  }
  if (system.storage === "sqlite") {
    const sqlitePath = join(tmpdir(), `${name}.db`);
    liveSqliteFiles.add(sqlitePath);
    const cleanup = async () => {
      removeSqliteFiles(sqlitePath);
      liveSqliteFiles.delete(sqlitePath);
    };
    return { target: { databaseUrl: null, sqlitePath }, database: null, cleanup };
  }
  if (system.storage === "redis") {
    return {
      target: { databaseUrl: null, sqlitePath: null, redisPrefix: name },
      database: null,
      cleanup: () => deleteRedisPrefix(name),
    };
  }
  return { target: { databaseUrl: null, sqlitePath: null }, database: null, cleanup: async () => {} };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function summarise(incidents: readonly string[]): string {
  const shown = incidents.slice(0, 3).join("; ");
  return incidents.length > 3 ? `${shown}; and ${incidents.length - 3} more` : shown;
}

/**
 * Runs `fn` on fresh storage. When the workload needs the worker host (or the system is in-process), the
 * child is spawned first, so its start-up overlaps with creating and migrating the database.
 *
 * Afterwards everything is closed, and the measurement is INVALID if anything went wrong that `fn` did not
 * see: an incident in this process or a worker host (incidents.ts), or a session of its database that the
 * server terminated or lost (`sessionTrouble`). Nothing of this crashes the bench.
 */
export async function withMeasurement<T>(
  system: SystemAdapter,
  adminUrl: string,
  needsHost: boolean,
  fn: (ctx: MeasureContext) => Promise<T>,
): Promise<T> {
  // What happened between measurements (the previous database's FORCE drop) is not this one's.
  takeIncidents();
  const runtime = system.runtime;
  const hosts: HostClient[] = needsHost || system.inProcess ? [new HostClient(system.id, runtime)] : [];
  // A row on another runtime enqueues from a child on that runtime too (the parent never loads its library).
  const producerHost = runtime && !system.inProcess ? new HostClient(system.id, runtime) : null;
  const opened = new Map<HostClient, Promise<void>>();
  let target: Target | null = null;
  let producer: ProducerHandle | null = null;
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  const incidents: string[] = [];
  try {
    target = await makeTarget(system, adminUrl);
    const t = target.target;
    const preparer = producerHost ?? (runtime ? hosts[0] : undefined);
    if (preparer) await preparer.prepare(system.id, t);
    else await system.prepare(t);
    const open = async (host: HostClient): Promise<HostClient> => {
      let ready = opened.get(host);
      if (!ready) {
        ready = host.open(system.id, t);
        opened.set(host, ready);
      }
      await ready;
      return host;
    };
    const getHosts = (count: number): Promise<HostClient[]> => {
      while (hosts.length < count) hosts.push(new HostClient(system.id, runtime));
      return Promise.all(hosts.slice(0, count).map(open));
    };
    const getHost = async () => (await getHosts(1))[0] as HostClient;
    if (system.inProcess) producer = (await getHost()).producer();
    else if (producerHost) producer = (await open(producerHost)).producer();
    else producer = localProducer(await system.open(t));
    const ctx = { system, target: t, database: target.database, adminUrl, producer };
    outcome = { ok: true, value: await fn({ ...ctx, host: getHost, hosts: getHosts }) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  await producer?.close().catch((err: unknown) => incidents.push(`closing the producer: ${message(err)}`));
  const children = producerHost ? [...hosts, producerHost] : hosts;
  for (const found of await Promise.all(children.map((h) => h.close()))) incidents.push(...found);
  incidents.push(...takeIncidents());
  if (target?.database) {
    const trouble = await sessionTrouble(adminUrl, target.database).catch((err: unknown) => [
      `reading the database's session statistics: ${message(err)}`,
    ]);
    incidents.push(...trouble);
  }
  await target?.cleanup();
  if (!outcome.ok) {
    if (incidents.length === 0) throw outcome.error;
    const reason =
      outcome.error instanceof InvalidRun ? outcome.error.message : `error: ${message(outcome.error)}`;
    throw new InvalidRun(`${reason}; incidents: ${summarise(incidents)}`);
  }
  if (incidents.length > 0) throw new InvalidRun(`incidents: ${summarise(incidents)}`);
  return outcome.value;
}
