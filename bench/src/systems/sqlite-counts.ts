/**
 * The verification reads of the SQLite queues (liteque, plainjob): a connection of the harness's own on the
 * measurement's file (WAL, so it reads beside the queue's writer), with prepared statements.
 */
import Database from "better-sqlite3";
import { type Counts, TASK_NAMES, type TaskKind } from "./types.js";

export class SqliteCounts {
  private readonly db: Database.Database;
  private readonly countsStmt: Database.Statement<[string], Counts>;
  private readonly settledStmt: Database.Statement<[string], { busy: number }>;

  /** `counts` selects pending, done, failed, distinct for one `?` (the task name); `busy` 1 when pending. */
  constructor(path: string, counts: string, busy: string) {
    this.db = new Database(path);
    this.db.pragma("busy_timeout = 5000");
    this.countsStmt = this.db.prepare(counts);
    this.settledStmt = this.db.prepare(busy);
  }

  counts(kind: TaskKind): Counts {
    const row = this.countsStmt.get(TASK_NAMES[kind]);
    if (!row) throw new Error("sqlite counts returned no row");
    return row;
  }

  settled(kind: TaskKind): boolean {
    return this.settledStmt.get(TASK_NAMES[kind])?.busy !== 1;
  }

  close(): void {
    this.db.close();
  }
}
