/** The example's settings from the environment (the library itself never reads it). */
import { fileURLToPath } from "node:url";
import { type DatabaseTarget, parseDatabaseUrl } from "./database.js";

/** `apps/example/soniq.db`, wherever the command is run from. */
export const DEFAULT_SQLITE_FILE = fileURLToPath(new URL("../soniq.db", import.meta.url));

export interface Config {
  database: DatabaseTarget;
  port: number;
  host: string;
  /** False when SONIQ_EXAMPLE_WORKER=off: run `pnpm --dir apps/example worker` beside the server. */
  inProcessWorker: boolean;
  reviewDelayMs: number;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be an integer >= 0 (got "${raw}")`);
  return value;
}

export function readConfig(env: NodeJS.ProcessEnv): Config {
  const worker = env.SONIQ_EXAMPLE_WORKER ?? "on";
  if (worker !== "on" && worker !== "off")
    throw new Error(`SONIQ_EXAMPLE_WORKER must be on or off (got "${worker}")`);
  return {
    database: parseDatabaseUrl(env.SONIQ_DATABASE_URL, DEFAULT_SQLITE_FILE),
    port: integer(env, "PORT", 3000),
    host: env.HOST || "127.0.0.1",
    inProcessWorker: worker === "on",
    reviewDelayMs: integer(env, "SONIQ_EXAMPLE_REVIEW_DELAY_MS", 10_000),
  };
}
