import { memoryBackend } from "@soniq/backend-memory";
import { PermanentError, Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
let cardDeclined = true;
const charge = soniq.job("orders.charge", async ({ orderId }: { orderId: string }) => {
  if (cardDeclined) throw new PermanentError("card declined"); // dead-lettered at once
  return { paid: orderId };
});
const reserve = soniq.job("orders.reserve", async () => ({ shelf: "B4" }));
const ship = soniq.job("orders.ship", async (_args: { orderId: string }, ctx) => {
  const parents = await ctx.flow?.parents(); // each parent's outcome and result, by ref
  return { paid: parents?.charge?.status, shelf: parents?.reserve?.status };
});
const notify = soniq.job("orders.notify", async () => "sent");
await soniq.setup();

const orderId = "A-17";
const flow = await soniq.flows.start(
  {
    name: "orders.fulfil", // a label (dotted lowercase), optional
    steps: {
      charge: { job: charge, args: { orderId } }, // a job definition or a job name
      reserve: { job: reserve, args: { orderId }, options: { priority: 10 } },
      ship: { job: ship, args: { orderId }, dependsOn: ["charge", "reserve"] },
      notify: { job: notify, dependsOn: ["ship"], onParentFailure: "run" },
    },
  },
  { actor: "checkout" }, // and { tx } on Postgres and SQLite: it starts in the caller's transaction
);
console.log(Object.keys(flow.jobs).join(",")); // every step's job id, minted now
// -> charge,reserve,ship,notify
await soniq.worker().runOnce(); // charge is dead-lettered, reserve done: ship is held
const held = await soniq.flows.get(flow.id);
console.log(held?.state, held?.steps.map((s) => `${s.ref}:${s.state}`).join(" "));
// -> held charge:dead_lettered reserve:done ship:held notify:waiting
console.log((await soniq.jobs.explain(flow.jobs.ship as string)).reasons[0]?.code);
// -> held_by_dead_letter

cardDeclined = false; // fix the cause, then replay: the new job takes charge's place and the flow runs on
await soniq.deadLetters.replay(flow.jobs.charge as string);
await soniq.worker().runOnce(); // charge, then ship (released by the new charge's done), then notify
const done = await soniq.flows.waitFor(flow.id, { timeoutMs: 10_000 }); // resolves once it finishes
console.log(
  done.state,
  done.steps[0]?.jobIds.length,
  (await soniq.jobs.get(done.steps[2]?.jobId as string))?.result ?? null,
);
// -> succeeded 2 { paid: 'done', shelf: 'done' }
await soniq.close();
