/**
 * One measurement = one system, one workload, one fresh database (or SQLite file), one worker host child.
 * Everything it creates is removed afterwards, whatever happened.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostClient } from "./host-client.js";
import { benchDatabaseName, createDatabase, dropDatabase, dropLiveDatabases } from "./pg-admin.js";
import { localProducer, type ProducerHandle } from "./producer.js";
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
  producer: ProducerHandle;
  /** The worker host (started on demand; always present for in-process systems). */
  host(): Promise<HostClient>;
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

async function makeTarget(
  system: SystemAdapter,
  adminUrl: string,
): Promise<{ target: SystemTarget; cleanup: () => Promise<void> }> {
  const name = benchDatabaseName(system.id);
  if (system.storage === "postgres") {
    const databaseUrl = await createDatabase(adminUrl, name);
    return { target: { databaseUrl, sqlitePath: null }, cleanup: () => dropDatabase(adminUrl, name) };
  }
  if (system.storage === "sqlite") {
    const sqlitePath = join(tmpdir(), `${name}.db`);
    liveSqliteFiles.add(sqlitePath);
    const cleanup = async () => {
      removeSqliteFiles(sqlitePath);
      liveSqliteFiles.delete(sqlitePath);
    };
    return { target: { databaseUrl: null, sqlitePath }, cleanup };
  }
  return { target: { databaseUrl: null, sqlitePath: null }, cleanup: async () => {} };
}

/**
 * Runs `fn` on fresh storage. When the workload needs the worker host (or the system is in-process), the
 * child is spawned first, so its start-up overlaps with creating and migrating the database.
 */
export async function withMeasurement<T>(
  system: SystemAdapter,
  adminUrl: string,
  needsHost: boolean,
  fn: (ctx: MeasureContext) => Promise<T>,
): Promise<T> {
  let host: HostClient | null = needsHost || system.inProcess ? new HostClient(system.id) : null;
  let target: { target: SystemTarget; cleanup: () => Promise<void> } | null = null;
  let producer: ProducerHandle | null = null;
  let opened: Promise<void> | null = null;
  try {
    target = await makeTarget(system, adminUrl);
    const t = target.target;
    await system.prepare(t);
    const getHost = async () => {
      host ??= new HostClient(system.id);
      opened ??= host.open(system.id, t);
      await opened;
      return host;
    };
    producer = system.inProcess ? (await getHost()).producer() : localProducer(await system.open(t));
    return await fn({ system, producer, host: getHost });
  } finally {
    await producer?.close().catch(() => {});
    await (host as HostClient | null)?.close().catch(() => {});
    await target?.cleanup();
  }
}
