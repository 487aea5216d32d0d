import type { Soniq } from "@soniq/core";
import type { DashboardApiKey } from "@soniq/dashboard";

declare const soniq: Soniq;
declare const apiKeys: DashboardApiKey[];

// #region snippet
import { createServer } from "node:http";
import { dashboard, nodeListener } from "@soniq/dashboard";

const soniqDashboard = nodeListener(dashboard({ soniq, basePath: "/soniq", apiKeys }));
createServer((req, res) => {
  if (req.url?.startsWith("/soniq")) return void soniqDashboard(req, res);
  // ... the rest of your app
}).listen(3000, "127.0.0.1");
// #endregion snippet
