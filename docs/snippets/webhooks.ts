import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({
  backend: postgresBackend({ connectionString: "postgres://localhost:5432/app" }),
  // Endpoint secrets are encrypted at rest (AES-256-GCM) with this key; the library reads no environment.
  // To rotate it: a keyring, { current: "k2", keys: { k1: oldKey, k2: newKey } }, then webhooks.reseal() below.
  webhooks: { secretKey: process.env.SONIQ_SECRET_KEY },
});
const endpoint = await soniq.webhooks.register(
  {
    url: "https://ops.example.com/soniq",
    events: ["job.dead_letter", "queue.backlog", "schedule.missed"],
    secret: "whsec_...", // 16..512 characters; stored encrypted, never returned or logged
    headers: { authorization: "Bearer ..." }, // optional; X-Webhook-* always win
    maxAttempts: 5, // default 5
    timeoutMs: 10_000, // default 10 s per attempt
    retry: { backoff: "exponential", delayMs: 10_000, maxDelayMs: 600_000 }, // the jobs' retry shapes; this is the default
  },
  { actor: "ops-tina" },
);
const { id } = endpoint;
await soniq.queues.configure("emails", { lagAlertMs: 60_000 }); // queue.backlog past one minute of lag
await soniq.webhooks.list();
await soniq.webhooks.get(id);
await soniq.webhooks.update(id, { active: false }); // a new `secret` rotates it
const [failed] = await soniq.webhooks.deliveries({ endpointId: id, status: "failed", limit: 10 }); // newest first
if (failed) await soniq.webhooks.redeliver(failed.id, { actor: "ops-tina" }); // same id, fresh budget
await soniq.webhooks.test(id); // one signed `webhook.test` now: { ok, status, error, durationMs }
await soniq.webhooks.reseal({ actor: "ops-tina" }); // stored secrets under the current key: { resealed, failed, ... }
await soniq.webhooks.remove(id); // with its deliveries
