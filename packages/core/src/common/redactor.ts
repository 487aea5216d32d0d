/**
 * The shape of the resolved `redact` option (observability/redact.ts builds it): on the ground floor, so what a
 * plugin is handed of its instance (`Plugin.attach`) can name it.
 */

export type RedactField = "args" | "result" | "progress" | "error";

/** The fields of a job, dead letter or schedule that `redact` applies to (the others pass unchanged). */
export interface RedactableRow {
  readonly jobName: string;
  readonly args?: unknown;
  readonly result?: unknown;
  readonly progress?: unknown;
  readonly lastError?: string | null;
  /** A job's dedup key: "[redacted]" when it quotes a hidden value. */
  readonly dedupKey?: string | null;
  /** A job's group: "[redacted]" when it quotes a hidden value, as `dedupKey`. */
  readonly group?: string | null;
  /** A dead letter's tags: hidden values scrubbed from the strings inside. */
  readonly tags?: Record<string, unknown> | null;
}

/** The resolved `redact` option. */
export interface Redactor {
  /** False when no `redact` was given (every method returns its input). */
  readonly active: boolean;
  /** A copy of `row` with args, result, progress, lastError, dedupKey, group and tags as operators may see them. */
  row<T extends RedactableRow>(row: T): T;
  /** One value of `field` of a job named `jobName`. */
  value(field: Exclude<RedactField, "error">, value: unknown, jobName: string): unknown;
  /** An error text of a job named `jobName` (`secretsFrom`: the row whose redacted values to scrub). */
  error(text: string | null, jobName: string, secretsFrom?: RedactableRow): string | null;
}
