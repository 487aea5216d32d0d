import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const backend = memoryBackend(); // one queue, two deploys of the app
const before = new Soniq({ backend });
const welcome = before.job("emails.welcome", async ({ email }: { email: string }) => `sent to ${email}`);
await before.setup();
const { id } = await welcome.enqueue({ email: "ann@example.com" }); // stored as version 1
console.log((await before.jobs.get(id))?.argsVersion);
// -> 1

const after = new Soniq({ backend }); // the new code: the args changed shape
after.job(
  "emails.welcome",
  async ({ to, locale }: { to: string; locale: string }) => `sent to ${to} in ${locale}`,
  { version: 2, upcast: { 1: (old: { email: string }) => ({ to: old.email, locale: "en" }) } },
);
await after.worker().runOnce(); // the old job passes the upcaster (1 -> 2), then the schema, then runs
console.log(JSON.stringify(await after.jobs.waitFor(id, { timeoutMs: 5_000 })));
// -> {"status":"done","result":"sent to ann@example.com in en"}
await after.close();
await before.close();
