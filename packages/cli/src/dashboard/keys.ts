/**
 * The keys and the exposure check of `soniq dashboard`. Keys come from `SONIQ_DASHBOARD_KEYS` or a file
 * (`--keys-file`), never from a flag (flags show in `ps` and shell history). Both hold entries
 * `label:scope:key` (scope `read` or `write`), separated by commas or new lines; a file may also hold
 * blank lines and `#` comments. Listening off loopback without a key is refused unless `--insecure-open`.
 */
import { readFileSync } from "node:fs";
import { CliError, usage } from "../errors.js";

export interface DashboardKey {
  key: string;
  label: string;
  scope: "read" | "write";
}

export const KEYS_ENV = "SONIQ_DASHBOARD_KEYS";
const ENTRY = /^([A-Za-z0-9_.@-]{1,64}):(read|write):(\S{16,})$/;

/** Parses `label:scope:key` entries; `source` names where they came from in error messages. */
export function parseKeys(text: string, source: string): DashboardKey[] {
  const keys: DashboardKey[] = [];
  const lines = text
    .split(/[,\n]/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  lines.forEach((line, i) => {
    const m = ENTRY.exec(line);
    if (!m) {
      // Never echo the entry: it may hold a key.
      throw usage(
        `${source}: entry ${i + 1} is not label:scope:key (scope read or write, the key at least 16 characters, no spaces).`,
      );
    }
    keys.push({ label: m[1] as string, scope: m[2] as "read" | "write", key: m[3] as string });
  });
  return keys;
}

/** The keys from `--keys-file` or, without it, `SONIQ_DASHBOARD_KEYS` (none: an empty list). */
export function loadKeys(file: string | undefined, env: NodeJS.ProcessEnv): DashboardKey[] {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new CliError("SONIQ_CLI_USAGE", `cannot read --keys-file ${file}: ${(err as Error).message}.`, {
        cause: err,
      });
    }
    return parseKeys(text, file);
  }
  const value = env[KEYS_ENV];
  return value ? parseKeys(value, KEYS_ENV) : [];
}

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Refuses to serve jobs' data to a network without a key, unless the user said so. */
export function assertSafeExposure(host: string, keys: readonly DashboardKey[], insecureOpen: boolean): void {
  if (isLoopback(host) || keys.length > 0 || insecureOpen) return;
  throw new CliError(
    "SONIQ_CLI_REFUSED",
    `refusing to serve the dashboard on ${host} without an API key: anyone who can reach it would read every job's ` +
      `args, results and errors. Set ${KEYS_ENV}=label:scope:key (or --keys-file), or pass --insecure-open.`,
  );
}
