/** The durable-step jobs the CLI's step tests (steps.test.ts, mcp.test.ts) run in a worker of the test process. */
import { PermanentError, type Soniq } from "@soniq/core";
import { openApp, type TestDb } from "./cli.js";

/**
 * An app in the test process with two step jobs on the queue "steps": `steps.onboard` checkpoints an account
 * (with a token) and waits for the signal "approval"; `steps.charge` checkpoints a reservation (with a token),
 * then its charge fails for good quoting that token, unless the charge was resolved at replay.
 */
export async function stepApp(db: TestDb): Promise<Soniq> {
  const local = await openApp(db, false);
  local.job(
    "steps.onboard",
    async (_args: { user: string }, ctx) => {
      const created = await ctx.step("create_account", async () => ({
        account: "acc_1",
        session: { token: "tok_live_secret" },
      }));
      const approval = await ctx.waitForSignal<{ by: string }>("approval", { timeoutMs: 3_600_000 });
      return { account: created.account, approvedBy: approval?.by ?? null };
    },
    { queue: "steps" },
  );
  local.job(
    "steps.charge",
    async (_args: { order: number }, ctx) => {
      const reserved = await ctx.step("reserve", async () => ({ token: "tok_live_secret" }));
      const payment = await ctx.step("charge_card", async (): Promise<{ paymentId: string }> => {
        throw new PermanentError(`card declined for ${reserved.token}`);
      });
      return { paid: payment.paymentId };
    },
    { queue: "steps" },
  );
  return local;
}

/** Runs the step jobs that are due (one worker pass on the queue "steps"). */
export const runSteps = (local: Soniq) => local.worker({ queues: ["steps"] }).runOnce();
