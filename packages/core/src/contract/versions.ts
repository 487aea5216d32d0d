/**
 * The `versions` facet (capability `versions`, DESIGN.md section 20): the rows whose args are older than their
 * job's current version, and the rewrite that brings them up to it (`soniq.jobs.upgrade`). Core decides what the
 * new args are (the definition's upcasters, then its schema); a backend finds the rows and writes them, each
 * rewrite guarded so a row that changed meanwhile is left alone.
 */

/** Where the outdated rows are: queued jobs (status `queued` only: a running job is upcast by its run) or dead letters. */
export type VersionedTable = "jobs" | "deadLetters";

/** The rows of one job name whose `args_version` is set and below `below`. */
export interface OutdatedQuery {
  table: VersionedTable;
  jobName: string;
  /** A positive integer: the current version. Rows with a null `args_version` (taken as current) never match. */
  below: number;
}

/** A page of `OutdatedQuery`, in ascending id order. */
export interface OutdatedPage extends OutdatedQuery {
  /** Rows whose id is above this one (lower-case text order); null: from the first. */
  afterId: string | null;
  /** 1..1000. */
  limit: number;
}

/** An outdated row: its id, args and their version. */
export interface OutdatedArgs {
  id: string;
  args: unknown;
  argsVersion: number;
}

/** One row's new args. */
export interface ArgsRewrite {
  id: string;
  /** The `args_version` the row had when it was read: the write applies only while it still has it. */
  fromVersion: number;
  /** The upcast args, already checked as JSON by core. */
  args: unknown;
}

export interface VersionsFacet {
  /** How many rows match (for progress and dry runs). */
  count(query: OutdatedQuery): Promise<number>;
  /** A page of the matching rows, ascending by id. */
  list(page: OutdatedPage): Promise<OutdatedArgs[]>;
  /**
   * In one transaction: set each row's `args` and `args_version` to `version`, only where the row still exists
   * with `args_version = fromVersion` (and, for jobs, status `queued`). Everything else about the row stays (its
   * `args_hash` too: a unique job keeps the identity it was enqueued with). Returns how many rows it wrote.
   */
  rewrite(table: VersionedTable, rows: readonly ArgsRewrite[], version: number): Promise<number>;
}
