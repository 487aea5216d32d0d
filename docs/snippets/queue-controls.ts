import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
const send = soniq.job("emails.send", async ({ to }: { to: string }) => ({ sent: to }), { queue: "emails" });
await soniq.setup();

await soniq.queues.pause("emails", { actor: "ops-tina" }); // nothing is claimed from it; running jobs finish
const { id } = await send.enqueue({ to: "ada@example.com" });
await soniq.worker().runOnce(); // the job stays queued

const why = await soniq.jobs.explain(id); // every reason the job is not running, each with its evidence
console.log(why.status, why.reasons.map((r) => r.code).join(", ")); // (runOnce's worker is gone once it returns)
// -> queued queue_paused, no_worker_for_queue, no_handler_for_job

// At most 5 jobs of the queue at once across every worker, 1 per tenant, 100 starts a minute.
await soniq.queues.configure(
  "emails",
  { concurrency: 5, groupConcurrency: 1, rateLimit: { max: 100, perMs: 60_000 } },
  { actor: "ops-tina" },
);
const [emails] = await soniq.queues.list();
console.log(emails?.name, emails?.paused, emails?.concurrency, emails?.stats.queued);
// -> emails true 5 1

await soniq.queues.resume("emails", { actor: "ops-tina" });
await soniq.worker().runOnce();
console.log((await soniq.jobs.get(id))?.status);
// -> done
const audit = await soniq.audit.list({ limit: 10 }); // newest first: who did what, and when
console.log(audit.map((entry) => `${entry.actor} ${entry.action}`).join(", "));
// -> ops-tina queue.resume, ops-tina queue.configure, ops-tina queue.pause
await soniq.close();
