/**
 * `dead-letter export`: JSON lines through core's streaming export, or CSV paged the same way; with the
 * app's `redact` (`--module`) both are paged here and every row is shown through it.
 */
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import type { DeadLetterJob, Soniq } from "@soniq/core";
import { CliError } from "../errors.js";
import type { Io } from "../output.js";
import { eachPage, type FilterFlags, toFilter } from "./dead-letter-bulk.js";

const CSV_COLUMNS = [
  "id",
  "jobName",
  "queue",
  "priority",
  "attempts",
  "maxAttempts",
  "deadLetterReason",
  "resurrectionCount",
  "originalCreatedAt",
  "movedToDeadLetterAt",
  "lastResurrectionAt",
  "lastError",
  "args",
  "tags",
] as const satisfies readonly (keyof DeadLetterJob)[];

/** A cell a spreadsheet would run as a formula (OWASP's list: =, +, -, @, tab, carriage return). */
const FORMULA = /^[=+\-@\t\r]/;

/**
 * One CSV cell. Text that begins like a formula gets a leading `'` so a spreadsheet shows it instead of
 * running it (a job's error `=HYPERLINK(...)` stays text); numbers are written as numbers.
 */
export function csvCell(value: unknown): string {
  let text =
    value === null || value === undefined
      ? ""
      : value instanceof Date
        ? value.toISOString()
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
  if (typeof value !== "number" && FORMULA.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

interface Sink {
  write(chunk: string): boolean;
  once(event: "drain", listener: () => void): unknown;
}

async function write(sink: Sink, chunk: string): Promise<void> {
  if (!sink.write(chunk)) await new Promise<void>((resolve) => sink.once("drain", resolve));
}

async function openOutput(path: string): Promise<WriteStream> {
  const file = createWriteStream(path);
  try {
    await once(file, "open");
  } catch (err) {
    throw new CliError(
      "SONIQ_CLI_OUTPUT",
      `cannot write ${path}: ${(err as Error).message}. Check the --output path.`,
      {
        cause: err,
      },
    );
  }
  return file;
}

export async function exportRows(
  soniq: Soniq,
  filter: FilterFlags,
  format: "jsonl" | "csv",
  output: string | undefined,
  io: Io,
): Promise<number> {
  const file = output ? await openOutput(output) : null;
  const sink: Sink = file ?? io.out;
  try {
    const redact = soniq.options.redact;
    if (format === "jsonl" && !redact.active) return await soniq.deadLetters.export(toFilter(filter), sink);
    // With the app's redact the rows are shown through it, so the CLI pages them itself.
    const line =
      format === "jsonl"
        ? (row: DeadLetterJob) => JSON.stringify(row)
        : (row: DeadLetterJob) => CSV_COLUMNS.map((c) => csvCell(row[c])).join(",");
    if (format === "csv") await write(sink, `${CSV_COLUMNS.join(",")}\n`);
    let count = 0;
    await eachPage(soniq, toFilter(filter), async (page) => {
      for (const row of page) await write(sink, `${line(redact.row(row))}\n`);
      count += page.length;
    });
    return count;
  } finally {
    if (file) {
      file.end();
      await once(file, "close");
    }
  }
}
