/**
 * `pnpm example`: the scripted tour against the embedded default (SQLite) in a temporary file, or
 * against SONIQ_DATABASE_URL when it is set. Exits 0 when every step happened, 1 otherwise.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDatabaseUrl } from "./database.js";
import { reportStartupError } from "./startup-error.js";
import { runTour } from "./tour-script.js";

const dir = mkdtempSync(join(tmpdir(), "soniq-tour-"));
const database = parseDatabaseUrl(process.env.SONIQ_DATABASE_URL, join(dir, "soniq.db"));
try {
  await runTour({ database });
} catch (err) {
  reportStartupError(err, database);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
