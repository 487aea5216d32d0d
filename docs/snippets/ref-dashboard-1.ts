import type { Soniq } from "@soniq/core";

declare const soniq: Soniq;

// #region snippet
import { serveDashboard } from "@soniq/dashboard";

const server = await serveDashboard({
  soniq, // your Soniq instance (any backend)
  apiKeys: [{ key: process.env.SONIQ_DASHBOARD_KEY!, label: "ops", scope: "write" }], // omit for read-only
});
console.log(`dashboard on ${server.url}`); // http://127.0.0.1:6161
// later: await server.close()  (it does not close `soniq`)
// #endregion snippet
