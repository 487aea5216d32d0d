import { memoryBackend } from "@soniq/backend-memory";
import { Soniq, snooze } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
const poll = soniq.job(
  "exports.poll",
  async (args: { exportId: string }, ctx) => {
    const res = await fetch(`https://api.example.com/exports/${args.exportId}`, { signal: ctx.signal });
    if (res.status === 202) return snooze(30_000, "export not ready"); // no attempt spent
    return res.json();
  },
  { timeoutMs: 10_000 },
);

const { id } = await poll.enqueue({ exportId: "e1" });
await soniq.jobs.cancel(id); // true: it was queued; a running job's ctx.signal would abort
await soniq.close();
