/**
 * A job's durable steps (DESIGN.md section 19) as `jobs show` and `dead-letter show` print them. What `redact`
 * hides stays hidden: each checkpoint's value (a step's value, a signal's payload) goes through the app's
 * `redact` as the field "result", each failed step's error as an error of its job (scrubbed of the job's
 * redacted values), and every value `redact` hid from a checkpoint is scrubbed from the error texts shown
 * beside it, the job's last error included: a step that threw, or a handler that failed later, may quote a
 * value an earlier step returned.
 */
import { isSoniqError, type JobStep, type Soniq } from "@soniq/core";
import { type RedactableRow, type Redactor, shownSteps } from "@soniq/core/ops";
import { duration, firstLine, type Printer } from "./output.js";

/** A row and its steps, as an operator may see them. */
export interface WithSteps<T> {
  row: T;
  steps: JobStep[];
}

/** The steps of job `id`; none when the app's backend keeps no steps (a third-party backend without them). */
export async function stepsOf(soniq: Soniq, id: string): Promise<JobStep[]> {
  try {
    return await soniq.jobs.steps(id);
  } catch (err) {
    if (isSoniqError(err, "SONIQ_UNSUPPORTED")) return [];
    throw err;
  }
}

/** `row` and its steps as core's `shownSteps` shows them (one rule with the dashboard and the MCP server). */
export function shownWithSteps<T extends RedactableRow>(
  redact: Redactor,
  row: T,
  steps: readonly JobStep[],
): WithSteps<T> {
  const shown = shownSteps(redact, row, steps);
  return { row: shown.row, steps: shown.steps };
}

/** The value (through `redact` already) on one line: its JSON cut to `max` characters; "-" for none. */
function preview(value: unknown, max = 60): string {
  if (value === null || value === undefined) return "-";
  return firstLine(JSON.stringify(value), max);
}

function stateWord(p: Printer, state: JobStep["state"]): string {
  if (state === "done") return p.paint("green", state);
  if (state === "failed") return p.paint("red", state);
  return p.paint("yellow", state);
}

/**
 * The step timeline after a job's fields, in the order the checkpoints were first written: kind, name, state,
 * the attempt that wrote it ("resolved" for a value an operator gave at replay), how long it took, when a
 * waiting one wakes (a sleep's wake time, a signal wait's deadline), and the value's preview or, for a failed
 * step, its error's first line. Nothing for a job without steps.
 */
export function stepsTimeline(p: Printer, steps: readonly JobStep[]): void {
  if (steps.length === 0) return;
  p.line(p.paint("dim", `steps (${steps.length})`));
  p.table(
    ["KIND", "NAME", "STATE", "ATTEMPT", "DURATION", "WAKES", "VALUE"],
    steps.map((s) => [
      s.kind,
      s.name,
      stateWord(p, s.state),
      s.attempt === 0 ? "resolved" : String(s.attempt),
      s.startedAt && s.finishedAt
        ? duration(Math.max(0, s.finishedAt.getTime() - s.startedAt.getTime()))
        : "-",
      s.state === "waiting" && s.wakeAt ? `${s.wakeAt.toISOString()} (${p.ago(s.wakeAt)})` : "-",
      s.state === "failed" ? firstLine(s.error, 60) : preview(s.value),
    ]),
  );
}
