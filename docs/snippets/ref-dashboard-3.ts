import type { IncomingMessage, ServerResponse } from "node:http";
import type { Soniq } from "@soniq/core";
import { type DashboardApiKey, dashboard, nodeListener } from "@soniq/dashboard";

declare const soniq: Soniq;
declare const apiKeys: DashboardApiKey[];
declare const app: {
  use(fn: (req: IncomingMessage & { url: string }, res: ServerResponse, next: () => void) => unknown): void;
};

// #region snippet
const soniqDashboard = nodeListener(dashboard({ soniq, basePath: "/soniq", apiKeys }));
app.use((req, res, next) => (req.url.startsWith("/soniq") ? soniqDashboard(req, res) : next()));
// #endregion snippet
