/** The `metrics` facet: the persisted per-minute counters (`soniq_metrics`) the dashboard charts. */

/** One `soniq_metrics` row: counts for (minute, queue, job name). `record` adds them to what is stored. */
export interface MetricsRow {
  /** The minute, at a whole minute (UTC). */
  bucketStart: Date;
  queue: string;
  jobName: string;
  done: number;
  failed: number;
  retried: number;
  deadLettered: number;
  snoozed: number;
  runMsSum: number;
}

export interface MetricsListQuery {
  since: Date;
  queue: string | null;
}

export interface MetricsFacet {
  /** Add each row's counts to the stored row of its key (creating it), all in one transaction. */
  record(rows: readonly MetricsRow[]): Promise<void>;
  /** Rows with bucketStart >= since (one queue or all), oldest first. */
  list(query: MetricsListQuery): Promise<MetricsRow[]>;
  /** Delete rows whose minute is older than `olderThanMs` (by the backend's clock). Returns how many. */
  prune(olderThanMs: number): Promise<number>;
}
