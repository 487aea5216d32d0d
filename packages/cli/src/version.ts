/** The CLI's own version, read from its package.json at run time (one source of truth). */
import { readFileSync } from "node:fs";

export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
