/**
 * A job's (or dead letter's) durable steps as an operator or an agent may see them, one rule for every surface
 * (CLI, dashboard, MCP): each checkpoint's value (a step's value, a signal's payload) through `redact` as a
 * result of the job; each failed step's error through `redact` as an error of the job (what it hides of the row
 * scrubbed); and every value `redact` hid from a checkpoint or from the row scrubbed from the error texts shown
 * beside them (the steps', the row's last error, explain's evidence): a step that threw, or a handler that failed
 * later, may quote a value an earlier step returned.
 */
import type { JobStep } from "../common/types.js";
import { collect, REDACTED, type RedactableRow, type Redactor, scrub } from "../observability/redact.js";

export interface ShownSteps<T> {
  /** The row as `redact.row` shows it, its last error scrubbed of the steps' hidden values too. */
  row: T;
  steps: JobStep[];
  /** Another text shown beside them (explain's evidence) with the same values scrubbed. */
  scrub(text: string | null): string | null;
}

const same = (text: string | null) => text;

export function shownSteps<T extends RedactableRow>(
  redact: Redactor,
  row: T,
  steps: readonly JobStep[],
): ShownSteps<T> {
  if (!redact.active) return { row, steps: [...steps], scrub: same };
  const shownRow = redact.row(row);
  const hidden = new Set<string>();
  const hide = (raw: unknown, shown: unknown) => {
    const before = new Set<string>();
    const after = new Set<string>();
    collect(raw, before);
    collect(shown, after);
    for (const text of before) if (!after.has(text) && text !== REDACTED) hidden.add(text);
  };
  // What redact hid of the row too: a function `redact` sees an error text alone, not the row it quotes.
  for (const field of ["args", "result", "progress"] as const)
    if (Object.hasOwn(row, field)) hide(row[field], shownRow[field]);
  const values = steps.map((step) => {
    if (step.value === null || step.value === undefined) return step.value;
    const shown = redact.value("result", step.value, row.jobName);
    hide(step.value, shown);
    return shown;
  });
  const scrubHidden = (text: string | null) => scrub(text, hidden);
  const lastError = shownRow.lastError;
  return {
    row: typeof lastError === "string" ? { ...shownRow, lastError: scrubHidden(lastError) } : shownRow,
    steps: steps.map((step, i) => ({
      ...step,
      value: values[i],
      error: scrubHidden(redact.error(step.error, row.jobName, row)),
    })),
    scrub: scrubHidden,
  };
}

/** What `shownRows` reads: the app's `redact` and a job's (or dead letter's) steps. */
export interface StepsSource {
  readonly options: { readonly redact: Redactor };
  readonly jobs: { steps(id: string): Promise<JobStep[]> };
}

/** How many rows' steps `shownRows` reads at once. */
const STEP_READS = 8;

/**
 * A list's rows (jobs or dead letters) as `redact` shows them, each last error also scrubbed of what `redact` hid
 * of the row's durable steps (as `shownSteps` does for one row): a handler's error may quote a value an earlier
 * step returned, and a list shows the error without the steps. Reads the steps of the rows that have a last error,
 * a few at a time, only while `redact` is active; on a backend without steps, the rows as `redact.row` shows them.
 */
export async function shownRows<T extends RedactableRow & { id: string }>(
  source: StepsSource,
  rows: readonly T[],
): Promise<T[]> {
  const redact = source.options.redact;
  if (!redact.active) return [...rows];
  const shown: T[] = rows.map((row) => redact.row(row));
  let steps = true;
  for (let i = 0; i < rows.length && steps; i += STEP_READS) {
    const batch = rows.slice(i, i + STEP_READS);
    await Promise.all(
      batch.map(async (row, k) => {
        if (typeof row.lastError !== "string" || !steps) return;
        let read: JobStep[];
        try {
          read = await source.jobs.steps(row.id);
        } catch (err) {
          if ((err as { code?: unknown }).code !== "SONIQ_UNSUPPORTED") throw err;
          steps = false;
          return;
        }
        if (read.length > 0) shown[i + k] = shownSteps(redact, row, read).row;
      }),
    );
  }
  return shown;
}
