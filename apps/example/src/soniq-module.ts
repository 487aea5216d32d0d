/**
 * The example's Soniq instance for the `soniq` CLI: `pnpm --dir apps/example soniq worker src/soniq-module.ts`
 * runs the example's jobs in a CLI-managed worker (same SONIQ_DATABASE_URL as the server). The CLI stops it
 * on SIGINT / SIGTERM and exits; the app's own database handle goes with the process.
 */
import { openSoniq } from "./app.js";
import { readConfig } from "./config.js";

const config = readConfig(process.env);
export const { soniq } = await openSoniq(config.database, { reviewDelayMs: config.reviewDelayMs });
