import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
await soniq.setup(); // creates or upgrades the tables (idempotent)

const sendWelcome = soniq.job("emails.send_welcome", async (args: { to: string }, ctx) => {
  ctx.logger.info({ to: args.to }, "sending");
  return { sent: true };
});

const { id } = await sendWelcome.enqueue({ to: "ada@example.com" });

const worker = soniq.worker({ concurrency: 10 });
await worker.start();
// ... later, e.g. on SIGTERM (the library installs no signal handlers):
await worker.stop();

console.log((await soniq.jobs.get(id))?.result); // { sent: true }
await soniq.close(); // stops any running workers, then closes the backend
