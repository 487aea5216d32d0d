/**
 * A job's durable steps (DESIGN.md section 19) as the `job` and `dead_letter` tools answer them. What the app's
 * `redact` hides stays hidden: each checkpoint's value (a step's value, a signal's payload) goes through
 * `redact` as the field "result", each failed step's error as an error of its job (scrubbed of the job's
 * redacted values), and every value `redact` hid from a checkpoint or the row is scrubbed from the error texts
 * answered beside it, the row's last error included: a step that threw, or a handler that failed later, may
 * quote a value an earlier step returned. (The CLI's `jobs show` applies the same rule.)
 */
import { isSoniqError, type JobStep, type Soniq } from "@soniq/core";
import { type RedactableRow, type Redactor, shownSteps } from "@soniq/core/ops";

/** The steps of job `id`; none when the app's backend keeps no steps (a third-party backend without them). */
export async function stepsOf(soniq: Soniq, id: string): Promise<JobStep[]> {
  try {
    return await soniq.jobs.steps(id);
  } catch (err) {
    if (isSoniqError(err, "SONIQ_UNSUPPORTED")) return [];
    throw err;
  }
}

/**
 * `row` (a job or a dead letter) as `redact.row` shows it, with `steps` as core's `shownSteps` shows them (the
 * values hidden from the steps and the row scrubbed from the step errors and the row's last error).
 */
export function withSteps<T extends RedactableRow>(
  redact: Redactor,
  row: T,
  steps: readonly JobStep[],
): T & { steps: JobStep[] } {
  const shown = shownSteps(redact, row, steps);
  return { ...shown.row, steps: shown.steps };
}
