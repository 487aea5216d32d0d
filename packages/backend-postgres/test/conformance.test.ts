/**
 * The testkit's conformance suite, through its published entry points: once with the defaults and once
 * with worker outcomes committed asynchronously and named (prepared) statements switched on. Each run has a database of its own (the kit's cases
 * share storage within a run). The databases are created at the top level, before registration, because
 * the kit opens one harness to decide which cases apply before it registers them.
 */
import { type DeadLetterInterrupt, postgresBackendWithFaults } from "@soniq/backend-postgres/testing";
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";
import pg from "pg";
import { afterAll } from "vitest";
import { postgresBackend } from "../src/index.js";
import { postgresInspector } from "./inspector.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

interface Storage {
  db: TestDatabase;
  admin: pg.Pool;
}

const MODES = [false, true] as const;
const storage = new Map<boolean, Storage>();

async function createStorage(): Promise<void> {
  for (const mode of MODES) {
    const db = await createMigratedDatabase();
    // Long-lived and opened before the suite, so the per-case leak check does not count its sockets.
    const admin = new pg.Pool({ connectionString: db.url, max: 2, idleTimeoutMillis: 0 });
    admin.on("error", () => {});
    const warm = await Promise.all([admin.connect(), admin.connect()]);
    for (const client of warm) client.release();
    storage.set(mode, { db, admin });
  }
}

// Registered first, so a failure half way through creating the databases still drops what was created.
afterAll(async () => {
  for (const { db, admin } of storage.values()) {
    await admin.end();
    await db.drop();
  }
});
await createStorage();

function storageFor(asyncOutcomes: boolean): Storage {
  const found = storage.get(asyncOutcomes);
  if (!found) throw new Error("the conformance databases were not created");
  return found;
}

for (const asyncOutcomes of MODES) {
  await registerConformanceSuite({
    name: `postgres backend conformance${asyncOutcomes ? " (asyncOutcomes, preparedStatements)" : ""}`,
    runner: vitestRunner(),
    harness: () => {
      const { db, admin } = storageFor(asyncOutcomes);
      // The injected fault: the move's own connection is killed from another one between its two statements.
      const killConnection: DeadLetterInterrupt = async (_jobId, { pid }) => {
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      };
      let armed = false;
      const backend = postgresBackendWithFaults(
        { connectionString: db.url },
        { asyncOutcomes, preparedStatements: asyncOutcomes },
        {
          interruptDeadLetterMove: () => {
            if (!armed) return undefined;
            armed = false;
            return killConnection;
          },
        },
      );
      return {
        backend,
        inspector: postgresInspector(admin),
        injectDeadLetterFault: () => {
          armed = true;
        },
        // Another pool on the same database, as a second process would have.
        openPeer: () =>
          postgresBackend(
            { connectionString: db.url, poolConfig: { max: 4 } },
            { asyncOutcomes, preparedStatements: asyncOutcomes },
          ),
      };
    },
  });
}
