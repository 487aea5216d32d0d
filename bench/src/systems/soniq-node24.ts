/**
 * Soniq's Postgres and SQLite rows again, every process on Node 24 (`node24.ts`), beside the peers that need
 * Node >= 22: so a ratio to graphile-worker 0.18, pg-boss 12 or Sidequest is not a ratio of runtimes.
 */
import { node24Unavailable } from "../node24.js";
import {
  soniqPostgresOtelSampledOutSystem,
  soniqPostgresOtelSystem,
  soniqPostgresSystem,
  soniqPostgresTtl0System,
} from "./soniq-postgres.js";
import { soniqSqliteSystem } from "./soniq-sqlite.js";
import type { SystemAdapter } from "./types.js";

function onNode24(system: SystemAdapter, id: string, label: string): SystemAdapter {
  return {
    ...system,
    id,
    label,
    runtime: "node24",
    notes: `${system.notes}; on Node 24`,
    unavailable: async () => node24Unavailable(),
  };
}

export const soniqPostgresNode24System = onNode24(
  soniqPostgresSystem,
  "soniq-postgres-node24",
  "Soniq postgres (Node 24)",
);

/** The `resultTtlMs: 0` row on Node 24, beside graphile-worker 0.18 (which deletes a finished job too). */
export const soniqPostgresTtl0Node24System = onNode24(
  soniqPostgresTtl0System,
  "soniq-postgres-ttl0-node24",
  "Soniq postgres (resultTtlMs 0, Node 24)",
);

/**
 * The OpenTelemetry row on Node 24, whose AsyncLocalStorage runs on AsyncContextFrame instead of async_hooks:
 * the context manager then costs the worker's other promises nothing (on Node 20 every promise pays a hook).
 */
export const soniqPostgresOtelNode24System = onNode24(
  soniqPostgresOtelSystem,
  "soniq-postgres-otel-node24",
  "Soniq postgres (OpenTelemetry, Node 24)",
);

/** `soniq-postgres-otel-sampled-out` on Node 24: what a sampled-out job costs without async hooks. */
export const soniqPostgresOtelSampledOutNode24System = onNode24(
  soniqPostgresOtelSampledOutSystem,
  "soniq-postgres-otel-sampled-out-node24",
  "Soniq postgres (OpenTelemetry, sampled out, Node 24)",
);

/** No SQLite peer runs on Node 24 (see sidequest.ts), so `--quick` leaves this row out. */
export const soniqSqliteNode24System: SystemAdapter = {
  ...onNode24(soniqSqliteSystem, "soniq-sqlite-node24", "Soniq sqlite (in-process, Node 24)"),
  notInQuick: true,
};
