/**
 * Soniq on SQLite (`@soniq/backend-sqlite`, WAL). No database server: producer and worker share one process
 * and one Soniq instance, so wake-ups are in-process (a worker in another process would poll).
 * Loaded on first use, like the Postgres rows.
 */
import type { SystemAdapter, SystemTarget } from "./types.js";

function requirePath(target: SystemTarget): string {
  if (!target.sqlitePath) throw new Error("Soniq on SQLite needs a file");
  return target.sqlitePath;
}

async function prepare(target: SystemTarget): Promise<void> {
  const { sqliteBackend } = await import("@soniq/backend-sqlite");
  const backend = sqliteBackend({ filename: requirePath(target) });
  try {
    await backend.migrations.apply();
  } finally {
    await backend.close();
  }
}

export const soniqSqliteSystem: SystemAdapter = {
  id: "soniq-sqlite",
  label: "Soniq sqlite (in-process)",
  preload: () => Promise.all([import("@soniq/backend-sqlite"), import("./soniq-session.js")]),
  storage: "sqlite",
  inProcess: true,
  manyQueues: true,
  immediateRetries: true,
  queueLimits: true,
  flows: true,
  steps: true,
  notes: "sqliteBackend({ filename }) (WAL) with default settings; producer and worker in one process",
  prepare,
  async open(target) {
    const [{ sqliteBackend }, { SoniqAppSession }] = await Promise.all([
      import("@soniq/backend-sqlite"),
      import("./soniq-session.js"),
    ]);
    return new SoniqAppSession(sqliteBackend({ filename: requirePath(target) }), null);
  },
};

export const soniqSqliteContractSystem: SystemAdapter = {
  id: "soniq-sqlite-contract",
  label: "Soniq sqlite (contract loop)",
  preload: () => Promise.all([import("@soniq/backend-sqlite"), import("./soniq-session.js")]),
  storage: "sqlite",
  inProcess: true,
  optional: true,
  manyQueues: true,
  immediateRetries: true,
  notes: "diagnostic: @soniq/backend-sqlite driven by a minimal loop on the Backend contract",
  prepare,
  async open(target) {
    const [{ sqliteBackend }, { SoniqContractSession }] = await Promise.all([
      import("@soniq/backend-sqlite"),
      import("./soniq-session.js"),
    ]);
    return new SoniqContractSession(sqliteBackend({ filename: requirePath(target) }), null);
  },
};
