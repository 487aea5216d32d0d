/** Every benchmarked system, in table order. */
import { bullmqSystem } from "./bullmq.js";
import { dbosSystem } from "./dbos.js";
import { graphile018FastSystem, graphileDefaultSystem, graphileFastSystem } from "./graphile.js";
import { limitSystem } from "./limit.js";
import { litequeSystem } from "./liteque.js";
import { openWorkflowSystem } from "./openworkflow.js";
import { pgBossSystem } from "./pg-boss.js";
import { pgBoss12System } from "./pg-boss-12.js";
import { plainjobSystem } from "./plainjob.js";
import { sidequestPostgresSystem } from "./sidequest.js";
import { soniqMemoryContractSystem, soniqMemorySystem } from "./soniq-memory.js";
import {
  soniqPostgresNode24System,
  soniqPostgresOtelNode24System,
  soniqPostgresOtelSampledOutNode24System,
  soniqPostgresTtl0Node24System,
  soniqSqliteNode24System,
} from "./soniq-node24.js";
import {
  soniqPostgresAsyncSystem,
  soniqPostgresBatch500System,
  soniqPostgresContractSystem,
  soniqPostgresOtelSampledOutSystem,
  soniqPostgresOtelSystem,
  soniqPostgresSystem,
  soniqPostgresTtl0System,
} from "./soniq-postgres.js";
import { soniqSqliteContractSystem, soniqSqliteSystem } from "./soniq-sqlite.js";
import type { SystemAdapter } from "./types.js";

export const SYSTEMS: readonly SystemAdapter[] = [
  soniqPostgresSystem,
  soniqSqliteSystem,
  soniqMemorySystem,
  soniqPostgresNode24System,
  soniqSqliteNode24System,
  graphile018FastSystem,
  graphileFastSystem,
  graphileDefaultSystem,
  sidequestPostgresSystem,
  pgBoss12System,
  pgBossSystem,
  bullmqSystem,
  litequeSystem,
  plainjobSystem,
  limitSystem,
  dbosSystem,
  openWorkflowSystem,
  soniqPostgresContractSystem,
  soniqPostgresBatch500System,
  soniqPostgresAsyncSystem,
  soniqPostgresTtl0System,
  soniqPostgresOtelSystem,
  soniqPostgresOtelSampledOutSystem,
  soniqPostgresOtelNode24System,
  soniqPostgresOtelSampledOutNode24System,
  soniqPostgresTtl0Node24System,
  soniqSqliteContractSystem,
  soniqMemoryContractSystem,
];

export function findSystem(id: string): SystemAdapter {
  const system = SYSTEMS.find((s) => s.id === id);
  if (!system) throw new Error(`unknown system "${id}"; known: ${SYSTEMS.map((s) => s.id).join(", ")}`);
  return system;
}

/** Splits systems into those that can run here and those that cannot yet (with the reason). */
export async function availableSystems(
  systems: readonly SystemAdapter[],
): Promise<{ available: SystemAdapter[]; unavailable: [string, string][] }> {
  const available: SystemAdapter[] = [];
  const unavailable: [string, string][] = [];
  for (const s of systems) {
    const why = s.unavailable ? await s.unavailable() : null;
    if (why === null) available.push(s);
    else unavailable.push([s.id, why]);
  }
  return { available, unavailable };
}
