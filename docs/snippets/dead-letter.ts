import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
let accountingIsUp = false;
const syncInvoice = soniq.job(
  "accounting.sync_invoice",
  async ({ invoice }: { invoice: string }) => {
    if (!accountingIsUp) throw new Error("accounting API unreachable");
    return { synced: invoice };
  },
  { maxAttempts: 2, retry: { delaysMs: [0] } },
);
await soniq.setup();

const { id } = await syncInvoice.enqueue({ invoice: "INV-1" });
await soniq.worker().runOnce(); // runs what is due: attempt 1 fails, the retry fails, the job is dead-lettered

const dead = await soniq.deadLetters.get(id); // same id, now in soniq_dead_letter_jobs
console.log(dead?.deadLetterReason, dead?.attempts, await soniq.jobs.get(id));
// -> max_retries_exceeded 2 null
const rows = await soniq.deadLetters.list({ jobName: "accounting.sync_invoice" }); // newest first
console.log(rows.length, rows[0]?.lastError?.split("\n")[0]);
// -> 1 Error: accounting API unreachable

accountingIsUp = true; // fix the cause, then replay: a new queued job with attempts 0
const newId = await soniq.deadLetters.replay(id);
await soniq.worker().runOnce();
console.log(
  (await soniq.jobs.get(newId as string))?.result ?? null,
  (await soniq.deadLetters.get(id))?.resurrectionCount,
);
// -> { synced: 'INV-1' } 1

const archive = await soniq.deadLetters.export({ jobName: "accounting.sync_invoice" }); // JSON lines
console.log(
  archive.trim().split("\n").length,
  await soniq.deadLetters.purge(id),
  await soniq.deadLetters.purge(id),
);
// -> 1 true false
console.log(JSON.stringify(await soniq.jobs.stats())); // always these six keys
// -> {"total":1,"queued":0,"processing":0,"done":1,"dead_letter":0,"cancelled":0}
await soniq.close();
