-- Custom migration (drizzle-kit generate --custom): a flow step's row is written at the flow's start and then
-- changed by every settle that closes it, counts down its parents or releases it. On full pages each of those
-- updates moved the row to another page and added an entry to both of the table's indexes; with a quarter of each
-- page left free they stay on their page (heap-only updates: no index entries, a tenth of the WAL). Pages written
-- before this migration keep their layout until they are rewritten.
ALTER TABLE "soniq_flow_steps" SET (fillfactor = 75);
