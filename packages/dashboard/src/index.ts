export { type DashboardHandler, dashboard } from "./app.js";
export type { Principal } from "./auth.js";
export { DASHBOARD_ERROR_CODES, DashboardError, type DashboardErrorCode } from "./errors.js";
export type { DashboardApiKey, DashboardOptions, KeyScope } from "./options.js";
export { type DashboardServer, nodeListener, type ServeDashboardOptions, serveDashboard } from "./serve.js";
