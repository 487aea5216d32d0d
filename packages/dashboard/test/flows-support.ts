/**
 * Real flows for the dashboard tests, on the seeded app: `held` (its `charge` dead-lettered by a declined
 * card, `ship` held, `notify` waiting), `running` (one step queued on a queue no worker serves) and
 * `succeeded`. `approve()` makes the card pass, so a replayed charge succeeds and the held flow runs on;
 * `work()` runs the flows' worker until nothing of theirs is left to claim.
 */
import { PermanentError } from "@soniq/core";
import type { Seeded } from "./support.js";

export interface SeededFlows {
  held: string;
  running: string;
  succeeded: string;
  /** The held flow's charge: its dead letter's id. */
  deadCharge: string;
  approve(): void;
  work(): Promise<void>;
}

export async function withFlows(app: Seeded): Promise<SeededFlows> {
  const { soniq } = app;
  let declined = true;
  const ok = soniq.job("orders.step", async () => ({ ok: true }), { queue: "flows" });
  const charge = soniq.job(
    "orders.charge",
    async () => {
      if (declined) throw new PermanentError("card declined");
      return { charged: true };
    },
    { queue: "flows" },
  );
  const held = await soniq.flows.start({
    name: "orders.fulfil",
    steps: {
      charge: { job: charge },
      reserve: { job: ok },
      ship: { job: ok, dependsOn: ["charge", "reserve"] },
      notify: { job: ok, dependsOn: ["ship"], onParentFailure: "run" },
    },
  });
  const running = await soniq.flows.start({
    name: "reports.build",
    steps: { build: { job: ok, options: { queue: "later" } } },
  });
  const succeeded = await soniq.flows.start({ name: "orders.fulfil", steps: { charge: { job: ok } } });
  const worker = soniq.worker({ queues: ["flows"] });
  const work = async () => {
    await worker.runOnce({ maxJobs: 50 });
  };
  // Each pass claims what the last one released (the memory backend runs them at once).
  for (let pass = 0; ; pass++) {
    await work();
    const [h, s] = await Promise.all([soniq.flows.get(held.id), soniq.flows.get(succeeded.id)]);
    if (h?.state === "held" && s?.state === "succeeded") break;
    if (pass === 20) throw new Error(`flows did not settle: held is ${h?.state}, succeeded is ${s?.state}`);
  }
  return {
    held: held.id,
    running: running.id,
    succeeded: succeeded.id,
    deadCharge: held.jobs.charge as string,
    approve: () => {
      declined = false;
    },
    work,
  };
}
