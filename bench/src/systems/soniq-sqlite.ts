/**
 * Soniq on SQLite (`@soniq/backend-sqlite`, WAL). No database server: producer and worker share one process
 * and one backend object, so wake-ups are in-process (other processes would poll).
 */
import { sqliteBackend } from "@soniq/backend-sqlite";
import { SoniqSession } from "./soniq-session.js";
import type { SystemAdapter, SystemTarget } from "./types.js";

function requirePath(target: SystemTarget): string {
  if (!target.sqlitePath) throw new Error("soniq-sqlite needs a file");
  return target.sqlitePath;
}

export const soniqSqliteSystem: SystemAdapter = {
  id: "soniq-sqlite",
  label: "Soniq sqlite (contract loop)",
  storage: "sqlite",
  inProcess: true,
  notes: "INTERIM: @soniq/backend-sqlite (one file, WAL) in the worker's process, minimal contract loop",
  async prepare(target) {
    const backend = sqliteBackend({ filename: requirePath(target) });
    try {
      await backend.migrate();
    } finally {
      await backend.close();
    }
  },
  async open(target) {
    return new SoniqSession(sqliteBackend({ filename: requirePath(target) }), null);
  },
};
