/**
 * PostgreSQL array literals for the enqueue batches' columns (enqueue.ts), the producer's hot path in a bulk
 * enqueue. pg's generic encoder runs every element through a regex replace and a type dispatch: 0.7 µs a job of a
 * 1,000-job batch, a sixth of the producer's CPU, plus the garbage. Here a text element is quoted always (so an
 * empty string, `NULL`, a comma or a brace stay text) and escaped only when it holds a quote or a backslash, and a
 * run of equal values (a batch's job name and queue, usually) is quoted once. A flow's steps and jobs are
 * written the same way (flow-store.ts).
 */

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

function quoted(text: string): string {
  return NEEDS_ESCAPE.test(text) ? `"${text.replace(ESCAPED, "\\$&")}"` : `"${text}"`;
}

/** `{"a","b",NULL}`: a text[] literal (also for uuid[] and timestamptz[], whose text forms it carries). */
export function textArray(values: readonly (string | null)[]): string {
  const parts = new Array<string>(values.length);
  let last: string | null = null;
  let lastQuoted = "";
  for (let i = 0; i < values.length; i++) {
    const value = values[i] ?? null;
    if (value === null) {
      parts[i] = "NULL";
      continue;
    }
    if (value !== last) {
      last = value;
      lastQuoted = quoted(value);
    }
    parts[i] = lastQuoted;
  }
  return `{${parts.join(",")}}`;
}

/** A text column as an array literal, or null when every value is null (`unnest` pads a null array with nulls). */
export function textColumn(values: readonly (string | null)[]): string | null {
  return values.some((value) => value !== null && value !== undefined) ? textArray(values) : null;
}

/** A timestamptz column (ISO text), as `textColumn`. */
export function dateColumn(values: readonly (Date | null)[]): string | null {
  return textColumn(
    values.map((value) => (value === null || value === undefined ? null : value.toISOString())),
  );
}

/** `{1,2,3}`: an int[] literal of numbers core checked (finite; the cast rejects what is not an int). */
export function numberArray(values: readonly number[]): string {
  return `{${values.join(",")}}`;
}

/**
 * A nullable int column (`{1,NULL,3}`), or null when every value is null, as `textColumn`. Undefined counts as
 * null (a flow step's job stored before the column existed has no such key).
 */
export function intColumn(values: readonly (number | null | undefined)[]): string | null {
  if (values.every((value) => value === null || value === undefined)) return null;
  return `{${values.map((value) => (value === null || value === undefined ? "NULL" : value)).join(",")}}`;
}

/** `{t,f}`: a bool[] literal. */
export function boolArray(values: readonly boolean[]): string {
  return `{${values.map((value) => (value ? "t" : "f")).join(",")}}`;
}
