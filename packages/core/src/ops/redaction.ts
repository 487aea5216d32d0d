/**
 * The app's `redact` (`soniq.options.redact`) applied to what a surface shows beyond plain rows (a job or dead
 * letter goes through `redact.row`): a schedule's args, explain's evidence, which quotes the job's last error,
 * and what a webhook delivery's payload quotes of a job. The CLI, the dashboard and the MCP server show these
 * the same way.
 */
import type { Schedule } from "../common/types.js";
import type { Explanation } from "../jobs/explain.js";
import type { RedactableRow, Redactor } from "../observability/redact.js";
import type { WebhookDelivery } from "../webhooks/types.js";

/** A schedule with its args shown as the args of the job it fires. */
export function shownSchedule<T extends Pick<Schedule, "jobName" | "args">>(
  redact: Redactor,
  schedule: T,
): T {
  return { ...schedule, args: redact.value("args", schedule.args, schedule.jobName) };
}

/**
 * An explanation with the last error its evidence quotes redacted like that of `row`, the job or dead letter
 * explained (whose redacted values are scrubbed from the text too). Unchanged without a row or a `redact`.
 */
export function shownExplanation(
  redact: Redactor,
  explanation: Explanation,
  row: RedactableRow | null,
): Explanation {
  if (!redact.active || row === null) return explanation;
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
 * A delivery with the job values its payload quotes (`args`, `result`, `error`) shown through `redact`. The
 * payload was redacted by the app that stored it; the reading app's rule applies on top.
 */
export function shownDelivery(redact: Redactor, delivery: WebhookDelivery): WebhookDelivery {
  const data = delivery.payload.data;
  if (!redact.active || typeof data.jobName !== "string") return delivery;
  const shown: Record<string, unknown> = { ...data };
  if ("args" in data) shown.args = redact.value("args", data.args, data.jobName);
  if ("result" in data) shown.result = redact.value("result", data.result, data.jobName);
  if (typeof data.error === "string") shown.error = redact.error(data.error, data.jobName);
  return { ...delivery, payload: { ...delivery.payload, data: shown } };
}
