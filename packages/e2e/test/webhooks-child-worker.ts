/**
 * A worker process for webhooks-process-kill.test.ts: `node --conditions=source --import tsx
 * webhooks-child-worker.ts <sqlite|postgres> <file-or-url> <queue>`. It runs jobs but does not deliver
 * webhooks (`deliverWebhooks: false`), so the delivery its job's completion writes stays pending until the
 * parent SIGKILLs it: a crash between the event and its delivery.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";
import { SECRET_KEY } from "./webhooks-support.js";

const [kind, target, queue] = process.argv.slice(2) as [string, string, string];
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend, webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true } });
soniq.job(
  "hooks.crash",
  async (_args, ctx) => {
    process.send?.({ ran: ctx.jobId });
    return "done before the crash";
  },
  { queue },
);
const worker = soniq.worker({ queues: [queue], pollIntervalMs: 50, deliverWebhooks: false });
await worker.start();
process.send?.({ ready: worker.id });
