export { DEFAULT_DATABASE_URL } from "./database.js";
export { CLI_ERROR_CODES, CliError, type CliErrorCode } from "./errors.js";
export { createProgram, run } from "./program.js";
