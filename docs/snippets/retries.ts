import { memoryBackend } from "@soniq/backend-memory";
import { PermanentError, Soniq, snooze } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
const charge = soniq.job(
  "payments.charge",
  async ({ amount }: { amount: number }, ctx) => {
    if (amount <= 0) throw new PermanentError(`invalid amount: ${amount}`); // no retry: dead-lettered now
    if (ctx.attempt < 3) throw new Error("gateway timeout"); // retried per `retry`
    return { charged: amount, attempt: ctx.attempt };
  },
  // Retry at once here, so the example runs in a blink. In production: { backoff: "exponential", delayMs: 1000 }.
  { maxAttempts: 5, retry: { delaysMs: [0] } },
);
const exportSlotFree = false;
const exportCsv = soniq.job("reports.export_csv", async () => {
  if (!exportSlotFree) return snooze(60_000, "export slot busy"); // later, and no attempt spent
  return "exported";
});
await soniq.setup();

const worker = soniq.worker();
worker.on("job:failed", ({ job, error }) =>
  console.log(`attempt ${job.attempts} failed: ${error.split("\n")[0]}`),
);
worker.on("job:done", ({ job, result }) => console.log(`${job.jobName} done:`, result));
worker.on("job:dead_letter", ({ job, reason }) => console.log(`${job.jobName} dead-lettered: ${reason}`));
worker.on("job:snoozed", ({ job, delayMs }) => console.log(`${job.jobName} snoozed for ${delayMs} ms`));

await charge.enqueue({ amount: 4250 });
await worker.runOnce(); // runs what is due, and the retries that fall due meanwhile
// -> attempt 1 failed: Error: gateway timeout
// -> attempt 2 failed: Error: gateway timeout
// -> payments.charge done: { charged: 4250, attempt: 3 }
await charge.enqueue({ amount: -1 });
await worker.runOnce();
// -> payments.charge dead-lettered: permanent_failure
const exportJob = await exportCsv.enqueue({});
await worker.runOnce();
// -> reports.export_csv snoozed for 60000 ms
const snoozed = await soniq.jobs.get(exportJob.id);
console.log(snoozed?.status, snoozed?.attempts);
// -> queued 0
await soniq.close();
