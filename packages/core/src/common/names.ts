import { SoniqError } from "./errors.js";

/** Dotted lowercase: `emails.send_welcome`, `billing.invoices.v2`. */
export const JOB_NAME_PATTERN = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;

/** Queue names follow the same rule as job names, so they are safe in logs, metrics labels and URLs. */
export const QUEUE_NAME_PATTERN = JOB_NAME_PATTERN;

export function isValidJobName(name: unknown): name is string {
  return typeof name === "string" && name.length <= 255 && JOB_NAME_PATTERN.test(name);
}

export function assertJobName(name: unknown): asserts name is string {
  if (isValidJobName(name)) return;
  const shown = typeof name === "string" ? `"${name}"` : `a ${typeof name}`;
  throw new SoniqError(
    "SONIQ_INVALID_TASK_NAME",
    `Job name ${shown} is not a dotted lowercase identifier. Use letters a-z, digits and "_", ` +
      `separated by dots (e.g. "emails.send_welcome"), at most 255 characters.`,
    { context: { name, pattern: JOB_NAME_PATTERN.source } },
  );
}
