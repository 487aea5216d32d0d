// src/jobs.ts
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

export const soniq = new Soniq({ backend: sqliteBackend({ filename: "./soniq.db" }) });
soniq.job("emails.send_welcome", async ({ to }: { to: string }) => ({ sent: to }));
