/**
 * The versions facet (capability `versions`, DESIGN.md section 20): the queued jobs and dead letters whose args
 * are older than their job's version, and the rewrite `soniq.jobs.upgrade` makes, each call one synchronous step.
 */
import type {
  ArgsRewrite,
  OutdatedArgs,
  OutdatedQuery,
  VersionedTable,
  VersionsFacet,
} from "@soniq/core/backend";
import { encodeJson } from "./internal/rows.js";
import type { MemoryStore } from "./internal/store.js";

interface Versioned {
  readonly id: string;
  readonly jobName: string;
  argsJson: string;
  argsVersion: number | null;
}

/** The rows of the table that may be rewritten: queued jobs (a running job is upcast by its run), dead letters. */
function* rowsOf(store: MemoryStore, table: VersionedTable): Iterable<Versioned> {
  if (table === "deadLetters") yield* store.deadLetters.values();
  else for (const job of store.jobs.values()) if (job.live && job.status === "queued") yield job;
}

function matches(row: Versioned, query: OutdatedQuery): boolean {
  return row.jobName === query.jobName && row.argsVersion !== null && row.argsVersion < query.below;
}

export function versionsFacet(store: MemoryStore): VersionsFacet {
  return {
    count: async (query) => {
      let n = 0;
      for (const row of rowsOf(store, query.table)) if (matches(row, query)) n++;
      return n;
    },
    list: async (page) => {
      const found: Versioned[] = [];
      for (const row of rowsOf(store, page.table)) {
        if (matches(row, page) && (page.afterId === null || row.id > page.afterId)) found.push(row);
      }
      found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return found.slice(0, page.limit).map(
        (row): OutdatedArgs => ({
          id: row.id,
          args: JSON.parse(row.argsJson) as unknown,
          argsVersion: row.argsVersion as number,
        }),
      );
    },
    rewrite: async (table, rows, version) => rewrite(store, table, rows, version),
  };
}

function rewrite(
  store: MemoryStore,
  table: VersionedTable,
  rows: readonly ArgsRewrite[],
  version: number,
): number {
  // Encode every row first: one that cannot be stored leaves the whole call unapplied, like a rolled-back transaction.
  const encoded = rows.map((r) => ({ ...r, json: encodeJson(r.args, "args", true) }));
  let written = 0;
  for (const r of encoded) {
    const row: Versioned | undefined = table === "jobs" ? store.jobs.get(r.id) : store.deadLetters.get(r.id);
    if (row === undefined || row.argsVersion !== r.fromVersion) continue;
    const job = table === "jobs" ? store.jobs.get(r.id) : undefined;
    if (job !== undefined && (!job.live || job.status !== "queued")) continue;
    row.argsJson = r.json;
    row.argsVersion = version;
    if (job !== undefined) job.updatedAt = store.now();
    written++;
  }
  return written;
}
