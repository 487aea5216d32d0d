/** `dead-letter export`: JSON lines through core's streaming export, or CSV paged the same way. */
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { DeadLetterFilter, DeadLetterJob } from "@soniq/core";
import type { App } from "../features.js";
import type { Io } from "../output.js";
import { matching } from "./dead-letter-bulk.js";

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

function csvCell(value: unknown): string {
  const text =
    value === null || value === undefined
      ? ""
      : value instanceof Date
        ? value.toISOString()
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

interface Sink {
  write(chunk: string): boolean;
  once(event: "drain", listener: () => void): unknown;
}

async function write(sink: Sink, chunk: string): Promise<void> {
  if (!sink.write(chunk)) await new Promise<void>((resolve) => sink.once("drain", resolve));
}

export async function exportRows(
  soniq: App,
  filter: DeadLetterFilter & { jobName?: string },
  format: "jsonl" | "csv",
  output: string | undefined,
  io: Io,
): Promise<number> {
  const file = output ? createWriteStream(output) : null;
  const sink: Sink = file ?? io.out;
  try {
    if (format === "jsonl") return await soniq.deadLetter.export(filter, sink);
    const rows = await matching(soniq, {
      queue: filter.queue,
      name: filter.jobName,
      reason: filter.reason,
      since: filter.since,
      until: filter.until,
    });
    await write(sink, `${CSV_COLUMNS.join(",")}\n`);
    for (const row of rows) await write(sink, `${CSV_COLUMNS.map((c) => csvCell(row[c])).join(",")}\n`);
    return rows.length;
  } finally {
    if (file) {
      file.end();
      await once(file, "close");
    }
  }
}
