/**
 * `soniq.deadLetter`: list, inspect, replay, purge and export dead-lettered jobs.
 * Replay mints a fresh queued job (new id, attempts 0) and keeps the dead-letter row, bumping its
 * resurrection count; it requires the job name to be defined on this instance unless the instance
 * allows unknown names, so a replayed job does not land where no worker can run it.
 */
import { randomUUID } from "node:crypto";
import { SoniqError } from "./errors.js";
import { enqueueOptionProblems, fail } from "./options.js";
import { type DeadLetterFilter, deadLetterListQuery, MAX_PAGE_SIZE } from "./queries.js";
import type { Runtime } from "./runtime.js";
import type { DeadLetterJob } from "./types.js";

export interface ReplayOverrides {
  queue?: string;
  priority?: number;
  /** When the new job becomes due (or `delayMs`; not both). Default: now. */
  runAt?: Date;
  delayMs?: number;
}

/** What a replay can change; `dedupKey`, `unique` and `tx` mean nothing for a replay and are refused. */
const REPLAY_KEYS = ["queue", "priority", "runAt", "delayMs"];

/** What `export` writes to: a node Writable, or anything with the same `write`/`once("drain")`. */
export interface LineSink {
  write(chunk: string): boolean;
  once(event: "drain", listener: () => void): unknown;
}

export class DeadLetterService {
  constructor(private readonly rt: Runtime) {}

  /** Newest first. `limit` defaults to 100 (at most 1000). */
  async list(filter?: DeadLetterFilter): Promise<DeadLetterJob[]> {
    return this.rt.backend.deadLetters.list(deadLetterListQuery(filter));
  }

  get(id: string): Promise<DeadLetterJob | null> {
    return this.rt.backend.deadLetters.get(id);
  }

  /** Returns the new job's id, or null when there is no dead-letter row with this id. */
  async replay(id: string, overrides: ReplayOverrides = {}): Promise<string | null> {
    if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides)) {
      throw new SoniqError(
        "SONIQ_INVALID_OPTIONS",
        "replay options must be an object { queue, priority, runAt, delayMs }.",
      );
    }
    const refused = Object.keys(overrides).filter((k) => !REPLAY_KEYS.includes(k));
    const problems = [
      ...refused.map((k) => `${k} is not a replay option (replay takes ${REPLAY_KEYS.join(", ")})`),
      ...(refused.length > 0 ? [] : enqueueOptionProblems(overrides)),
    ];
    if (problems.length > 0) fail("replay options", problems);
    let scheduledAt = overrides.runAt ?? null;
    if (overrides.delayMs !== undefined && overrides.delayMs > 0) {
      scheduledAt = new Date(Date.now() + overrides.delayMs);
    }
    const row = await this.rt.backend.deadLetters.get(id);
    if (!row) return null;
    if (!this.rt.registry.has(row.jobName) && !this.rt.options.allowUnknownJobNames) {
      throw new SoniqError(
        "SONIQ_UNKNOWN_TASK_NAME",
        `Cannot replay ${id}: no job named "${row.jobName}" is defined on this instance, so nothing here could run it. ` +
          "Define the job first, or create the instance with allowUnknownJobNames: true.",
        { context: { id, name: row.jobName } },
      );
    }
    const newId = await this.rt.backend.deadLetters.replay(id, {
      newId: randomUUID(),
      queue: overrides.queue ?? null,
      priority: overrides.priority ?? null,
      scheduledAt,
    });
    if (newId) for (const worker of this.rt.workers) worker.nudge();
    return newId;
  }

  /** Deletes the dead-letter row. False when there was none. */
  purge(id: string): Promise<boolean> {
    return this.rt.backend.deadLetters.purge(id);
  }

  /**
   * Every matching row as JSON lines (one object per line, dates as ISO strings), newest first.
   * Without `limit` in the filter, all matching rows are exported (paged internally).
   * With a destination, writes the lines to it (respecting back-pressure) and returns the row count;
   * without one, returns the text.
   */
  export(filter?: DeadLetterFilter): Promise<string>;
  export(filter: DeadLetterFilter | undefined, destination: LineSink): Promise<number>;
  async export(filter?: DeadLetterFilter, destination?: LineSink): Promise<string | number> {
    const query = deadLetterListQuery(filter, "deadLetter.export(filter)");
    // The query caps `limit` at a page; the caller's limit (validated above) bounds the whole export.
    const total = filter?.limit ?? Number.POSITIVE_INFINITY;
    const chunks: string[] = [];
    let count = 0;
    let offset = query.offset;
    for (;;) {
      const limit = Math.min(MAX_PAGE_SIZE, total - count);
      if (limit <= 0) break;
      const rows = await this.rt.backend.deadLetters.list({ ...query, limit, offset });
      for (const row of rows) {
        const line = `${JSON.stringify(row)}\n`;
        if (!destination) chunks.push(line);
        else if (!destination.write(line)) await new Promise<void>((r) => destination.once("drain", r));
      }
      count += rows.length;
      offset += rows.length;
      if (rows.length < limit) break;
    }
    return destination ? count : chunks.join("");
  }
}
