import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
let accountsCreated = 0;
const onboard = soniq.job("users.onboard", async ({ userId }: { userId: string }, ctx) => {
  const account = await ctx.step("create_account", () => {
    accountsCreated++; // runs once per job: a retry, a wake-up or a replay gets the stored value back
    return { accountId: `acct-${userId}` };
  });
  await ctx.sleep("grace_period", 1_200); // over 1 s: the job goes back to the queue; the worker is free
  const approval = await ctx.waitForSignal<{ by: string }>("approval", { timeoutMs: 86_400_000 });
  return { ...account, approvedBy: approval?.by ?? null }; // null after the timeout
});
await soniq.setup();

const { id } = await onboard.enqueue({ userId: "u1" });
await soniq.worker().runOnce(); // creates the account, then sleeps: queued again, due in 1.2 s
console.log((await soniq.jobs.explain(id)).reasons[0]?.code);
// -> sleeping
await new Promise((resolve) => setTimeout(resolve, 1_300));
await soniq.worker().runOnce(); // the step answers from its checkpoint; the wait suspends the job
console.log((await soniq.jobs.explain(id)).reasons[0]?.code);
// -> waiting_for_signal
await soniq.jobs.signal(id, "approval", { by: "ops@example.com" }, { key: "ticket-4711", actor: "ops" });
await soniq.worker().runOnce(); // the signal made the job due now: the wait returns its payload
console.log(JSON.stringify(await soniq.jobs.waitFor(id, { timeoutMs: 5_000 })), accountsCreated);
// -> {"status":"done","result":{"accountId":"acct-u1","approvedBy":"ops@example.com"}} 1
console.log((await soniq.jobs.steps(id)).map((s) => `${s.name}:${s.kind}:${s.state}`).join(" "));
// -> create_account:step:done grace_period:sleep:done approval:signal:done
await soniq.close();
