// src/jobs.ts: the module `soniq worker ./src/jobs.ts` runs. It exports the instance and defines its jobs.
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

export const soniq = new Soniq({ backend: sqliteBackend({ filename: "./soniq.db" }) });
soniq.job("emails.send_welcome", async ({ to }: { to: string }) => ({ sent: to }));
