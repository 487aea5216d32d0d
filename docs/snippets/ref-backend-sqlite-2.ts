declare const filename: string;

// #region snippet
import { sqliteBackendWithFaults } from "@soniq/backend-sqlite/testing";

let armed = false;
const backend = sqliteBackendWithFaults(
  { filename },
  {},
  {
    interruptDeadLetterMove: (jobId) => {
      const fire = armed;
      armed = false;
      return fire;
    },
  },
);
// #endregion snippet
