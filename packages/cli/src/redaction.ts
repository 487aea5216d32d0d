/**
 * The app's `redact` (core's `soniq.options.redact`, from `--module`) applied to what the CLI prints beyond
 * plain rows: schedules' args, explain's evidence, which quotes the job's last error, and what a webhook
 * delivery's payload quotes of a job.
 */
import type { Explanation, Schedule, Soniq, WebhookDelivery } from "@soniq/core";

/** A schedule with its args shown as the args of the job it fires. */
export function shownSchedule(soniq: Soniq, schedule: Schedule): Schedule {
  return { ...schedule, args: soniq.options.redact.value("args", schedule.args, schedule.jobName) };
}

export async function shownExplanation(
  soniq: Soniq,
  id: string,
  explanation: Explanation,
): Promise<Explanation> {
  const redact = soniq.options.redact;
  if (!redact.active) return explanation;
  const row = (await soniq.jobs.get(id)) ?? (await soniq.deadLetters.get(id));
  if (!row) return explanation;
  return {
    ...explanation,
    reasons: explanation.reasons.map((r) => {
      const text = r.evidence.lastError;
      if (typeof text !== "string") return r;
      return { ...r, evidence: { ...r.evidence, lastError: redact.error(text, row.jobName, row) } };
    }),
  };
}

/**
 * A delivery with the job values its payload quotes (`args`, `result`, `error`) shown through the app's
 * `redact`. The payload was redacted by the app that stored it; a `--module` app's rule applies on top.
 */
export function shownDelivery(soniq: Soniq, delivery: WebhookDelivery): WebhookDelivery {
  const redact = soniq.options.redact;
  const data = delivery.payload.data;
  if (!redact.active || typeof data.jobName !== "string") return delivery;
  const shown: Record<string, unknown> = { ...data };
  if ("args" in data) shown.args = redact.value("args", data.args, data.jobName);
  if ("result" in data) shown.result = redact.value("result", data.result, data.jobName);
  if (typeof data.error === "string") shown.error = redact.error(data.error, data.jobName);
  return { ...delivery, payload: { ...delivery.payload, data: shown } };
}
