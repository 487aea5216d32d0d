/**
 * An app whose jobs use durable steps (DESIGN.md section 19), on the memory backend: `users.onboard` creates an
 * account (a step whose value holds a token), sleeps a moment (in process), waits for the "approval" signal,
 * then charges the card (a step that throws for card "declined", quoting the account's token and the args'
 * password). One attempt each, so a throw dead-letters at once.
 */
import { memoryBackend } from "@soniq/backend-memory";
import { type Backend, type RedactOption, Soniq } from "@soniq/core";

export interface OnboardArgs {
  user: string;
  card: "ok" | "declined";
  password: string;
}

export interface StepsApp {
  soniq: Soniq;
  /** Queued, waiting for the "approval" signal: create_account and grace_period done. */
  waiting: string;
  /** A dead letter: approved by ops, then charge_card failed ("card declined ..."). */
  dead: string;
  /** Done: its approval was sent before it ran (buffered), then it charged the card. */
  done: string;
}

/** The token `create_account` returns for `user` (hidden by a redact path "token"). */
export const tokenOf = (user: string): string => `tok_${user}_live_secret`;

export async function stepsApp(
  options: { redact?: RedactOption; backend?: Backend<unknown> } = {},
): Promise<StepsApp> {
  const soniq = new Soniq({
    backend: options.backend ?? memoryBackend(),
    ...(options.redact ? { redact: options.redact } : {}),
  });
  await soniq.setup();
  const onboard = soniq.job(
    "users.onboard",
    async (args: OnboardArgs, ctx) => {
      const account = await ctx.step("create_account", async () => ({
        accountId: `acc_${args.user}`,
        token: tokenOf(args.user),
      }));
      await ctx.sleep("grace_period", 5);
      const approval = await ctx.waitForSignal<{ by: string }>("approval", { timeoutMs: 7 * 86_400_000 });
      if (approval === null) return { approved: false };
      const payment = await ctx.step("charge_card", async () => {
        if (args.card === "declined") {
          throw new Error(
            `card declined for ${account.accountId} (token ${account.token}, password ${args.password})`,
          );
        }
        return { paymentId: `pay_${args.user}` };
      });
      return { approved: true, by: approval.by, payment };
    },
    { maxAttempts: 1 },
  );
  const run = () => soniq.worker().runOnce({ maxJobs: 100 });
  const waiting = (await onboard.enqueue({ user: "ann", card: "ok", password: "hunter2" })).id;
  const dead = (await onboard.enqueue({ user: "bob", card: "declined", password: "hunter3" })).id;
  const done = (await onboard.enqueue({ user: "cat", card: "ok", password: "hunter4" })).id;
  await soniq.jobs.signal(done, "approval", { by: "ops@example.com" });
  await run();
  await soniq.jobs.signal(dead, "approval", { by: "ops@example.com", token: "sig_token_secret" });
  await run();
  return { soniq, waiting, dead, done };
}
