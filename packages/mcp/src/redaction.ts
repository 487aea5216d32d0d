/**
 * The app's `redact` (core's `soniq.options.redact`) applied to what the tools answer beyond plain rows:
 * schedules' args, and explain's evidence, which quotes the job's last error. Rows the app API returns are
 * redacted by core already.
 */
import type { Explanation, Schedule, Soniq } from "@soniq/core";

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
