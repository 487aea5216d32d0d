/**
 * The Postgres backend's conformance suite run unchanged through a private PgBouncer in transaction mode:
 * migrations, every facet, leases, the dead-letter fault (the settle's server connection terminated).
 * The database is created directly on 127.0.0.1:5432 and migrated through the pooler; LISTEN goes direct
 * (`listenConnectionString`), as docs/reference/backend-postgres.md tells users behind such a pooler.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { postgresBackendWithFaults } from "@soniq/backend-postgres/testing";
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";
import pg from "pg";
import { afterAll } from "vitest";
// The Postgres backend's test inspector (raw SQL on a separate pool; not public API).
import { postgresInspector } from "../../backend-postgres/test/inspector.js";
import { postgresKind } from "../test/runtime-support.js";
import { type PgBouncer, startPgBouncer } from "./pgbouncer.js";

const database = postgresKind();
const direct = database.target();
const name = new URL(direct).pathname.slice(1);

let bouncer: PgBouncer | undefined;
let inspectorPool: pg.Pool | undefined;
afterAll(async () => {
  await inspectorPool?.end();
  await bouncer?.stop();
  await database.teardown();
});
await database.setup();
bouncer = await startPgBouncer();
const url = bouncer.url(name);
{
  const setup = postgresBackend({ connectionString: url }, { preparedStatements: false });
  try {
    await setup.migrations.apply();
  } finally {
    await setup.close();
  }
}
// Opened before the suite (the per-case leak check counts sockets opened during a case).
inspectorPool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 0 });
inspectorPool.on("error", () => {});
for (const c of await Promise.all([inspectorPool.connect(), inspectorPool.connect()])) c.release();
const inspectorOn = inspectorPool;

await registerConformanceSuite({
  name: "postgres backend conformance through PgBouncer (transaction mode)",
  runner: vitestRunner(),
  harness: () => {
    let armed = false;
    const backend = postgresBackendWithFaults(
      { connectionString: url },
      // Wake-ups on the direct connection: LISTEN does not survive a transaction-mode pooler (docs/reference/backend-postgres.md).
      { preparedStatements: false, listenConnectionString: direct },
      {
        interruptDeadLetterMove: () => {
          if (!armed) return undefined;
          armed = false;
          // The settle's server connection (its pid, as the server sees it) is terminated mid-move.
          return async (_jobId, { pid }) => {
            await inspectorOn.query("SELECT pg_terminate_backend($1)", [pid]);
          };
        },
      },
    );
    return {
      backend,
      inspector: postgresInspector(inspectorOn),
      injectDeadLetterFault: () => {
        armed = true;
      },
      openPeer: () =>
        postgresBackend(
          { connectionString: url, poolConfig: { max: 4 } },
          { preparedStatements: false, listenConnectionString: direct },
        ),
    };
  },
});
