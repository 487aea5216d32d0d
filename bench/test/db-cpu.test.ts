/**
 * The store's CPU per job counts the system's sessions on the measurement's database, not the harness's own
 * (its counts and its `settled` poll every 2 ms run on a `harnessPool`). The same CPU-bound query runs once on
 * a harness session and once on an ordinary session, each inside its own sampling window: only the second
 * shows. PostgreSQL must answer: a test that cannot connect fails.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { startDbCpu } from "../src/db-cpu.js";
import {
  benchDatabaseName,
  benchPool,
  createDatabase,
  DEFAULT_DATABASE_URL,
  dropDatabase,
  harnessPool,
} from "../src/pg-admin.js";

const adminUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
const name = benchDatabaseName("db_cpu_test");
let url = "";

beforeAll(async () => {
  url = await createDatabase(adminUrl, name);
});
afterAll(async () => {
  await dropDatabase(adminUrl, name);
});

/** About a tenth of a second of one backend's CPU, whatever else the machine is doing. */
const BUSY = "SELECT count(*) FROM generate_series(1, 2000000) g WHERE g % 7 = 3";

/** The database CPU seconds the sampler reports over one run of `BUSY` on `pool`. */
async function sampledOver(pool: ReturnType<typeof benchPool>): Promise<number> {
  await pool.query("SELECT 1"); // connected before the window, as the harness's pool is
  const sampler = await startDbCpu(adminUrl, name);
  if (!sampler) throw new Error("the sampler cannot read PostgreSQL's processes on this machine");
  await pool.query(BUSY);
  return sampler.stop();
}

test("bench/store-cpu-leaves-out-the-harness: a harness session's query is not the system's CPU", async () => {
  const harness = harnessPool(url, "test harness pool");
  const system = benchPool(url, 1, "test system pool");
  try {
    const systemSeconds = await sampledOver(system);
    const harnessSeconds = await sampledOver(harness);
    expect(systemSeconds).toBeGreaterThan(0.02);
    expect(harnessSeconds).toBeLessThan(systemSeconds / 4);
  } finally {
    await Promise.all([harness.end(), system.end()]);
  }
});
