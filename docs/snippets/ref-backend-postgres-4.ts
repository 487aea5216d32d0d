import type pg from "pg";

declare const connectionString: string;
declare const admin: pg.Client;

// #region snippet
import { postgresBackendWithFaults } from "@soniq/backend-postgres/testing";

let armed = false;
const backend = postgresBackendWithFaults(
  { connectionString },
  {},
  {
    interruptDeadLetterMove: () => {
      if (!armed) return undefined;
      armed = false;
      return async (_jobId, { pid }) => {
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      };
    },
  },
);
// #endregion snippet
