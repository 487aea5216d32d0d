import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

// #region snippet
// src/schedules.ts
export const soniq = new Soniq({ backend: sqliteBackend({ filename: "./soniq.db" }) });
soniq.job("reports.daily", async () => ({ sent: true }));
soniq.schedules.declare("reports.daily", { cron: "0 7 * * *", timezone: "Europe/Paris" });
// #endregion snippet
