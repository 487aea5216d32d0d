export { buildDBClient, Runner, SqliteQueue } from "liteque";
