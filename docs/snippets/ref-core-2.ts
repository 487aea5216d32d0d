import { memoryBackend } from "@soniq/backend-memory";
import { PermanentError, Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });

// Exponential: delayMs * 2^(attempt-1), capped at maxDelayMs, with full jitter (uniform in [0, delay]).
soniq.job(
  "billing.charge",
  async (args: { invoice: string }) => {
    if (args.invoice === "void") throw new PermanentError("invoice was voided"); // dead-letters at once
    return "charged";
  },
  { maxAttempts: 5, retry: { backoff: "exponential", delayMs: 1000, maxDelayMs: 60_000, jitter: true } },
);

// Fixed: the same delay every time (jitter off unless asked).
soniq.job("reports.build", async () => "built", { retry: { backoff: "fixed", delayMs: 5000 } });

// A list: the delay before attempt n+1 is delaysMs[n-1]; the last entry repeats.
soniq.job("sync.crm", async () => "synced", { maxAttempts: 4, retry: { delaysMs: [1000, 10_000, 60_000] } });

// A function: return the delay in ms, or null to dead-letter now (reason permanent_failure).
soniq.job("webhooks.deliver", async () => "delivered", {
  maxAttempts: 10,
  retry: ({ attempt, error }) => (error instanceof TypeError ? null : attempt * 1000),
});
await soniq.close();
