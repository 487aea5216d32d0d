/**
 * One measurement = one system, one workload, one fresh database (or SQLite file), one worker host child.
 * Everything it creates is removed afterwards, whatever happened.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostClient } from "./host-client.js";
import { benchDatabaseName, createDatabase, dropDatabase } from "./pg-admin.js";
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
    const cleanup = async () => {
      for (const suffix of ["", "-wal", "-shm", "-journal"])
        rmSync(`${sqlitePath}${suffix}`, { force: true });
    };
    return { target: { databaseUrl: null, sqlitePath }, cleanup };
  }
  return { target: { databaseUrl: null, sqlitePath: null }, cleanup: async () => {} };
}

export async function withMeasurement<T>(
  system: SystemAdapter,
  adminUrl: string,
  fn: (ctx: MeasureContext) => Promise<T>,
): Promise<T> {
  const { target, cleanup } = await makeTarget(system, adminUrl);
  let host: HostClient | null = null;
  let producer: ProducerHandle | null = null;
  try {
    await system.prepare(target);
    const getHost = async () => {
      host ??= await HostClient.open(system.id, target);
      return host;
    };
    producer = system.inProcess ? (await getHost()).producer() : localProducer(await system.open(target));
    return await fn({ system, producer, host: getHost });
  } finally {
    await producer?.close().catch(() => {});
    await (host as HostClient | null)?.close().catch(() => {});
    await cleanup();
  }
}
