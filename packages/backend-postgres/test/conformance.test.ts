/** The testkit's conformance suite, through its published entry points, on one database for this file. */
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { type DeadLetterInterrupt, postgresBackend } from "../src/index.js";
import { postgresInspector } from "./inspector.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let admin: pg.Pool;

beforeAll(async () => {
  db = await createMigratedDatabase();
  // Long-lived and opened before the suite, so the per-case leak check does not count its sockets.
  admin = new pg.Pool({ connectionString: db.url, max: 2, idleTimeoutMillis: 0 });
  admin.on("error", () => {});
  const warm = await Promise.all([admin.connect(), admin.connect()]);
  for (const client of warm) client.release();
});
afterAll(async () => {
  await admin?.end();
  await db?.drop();
});

// The injected fault: the move's own connection is killed from another one between its two statements.
const killConnection: DeadLetterInterrupt = async (_jobId, { pid }) => {
  await admin.query("SELECT pg_terminate_backend($1)", [pid]);
};

registerConformanceSuite({
  name: "postgres backend conformance",
  runner: vitestRunner(),
  harness: () => {
    let armed = false;
    const backend = postgresBackend(
      { connectionString: db.url },
      {
        testHooks: {
          interruptDeadLetterMove: () => {
            if (!armed) return undefined;
            armed = false;
            return killConnection;
          },
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
      openPeer: () => postgresBackend({ connectionString: db.url }),
    };
  },
});
