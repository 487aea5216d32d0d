// liteque resolves its better-sqlite3 peer from this package's own dependencies (11.9.1), not the bench's.
export { buildDBClient, Runner, SqliteQueue } from "liteque";
