/**
 * What the pack-check's stages share: where the repo is, how to run a command, a user's environment.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** Bounds for waiting on a child process; they only end a run that hangs, nothing waits for them. */
export const INSTALL_TIMEOUT_MS = 6 * 60_000;
export const RUN_TIMEOUT_MS = 60_000;

export function fail(message) {
  throw new Error(message);
}

/** Runs a command to completion; returns { code, out } (stdout and stderr interleaved). */
export function run(
  cmd,
  args,
  { cwd, env = process.env, timeoutMs = INSTALL_TIMEOUT_MS, allowFailure = false } = {},
) {
  const started = Date.now();
  const res = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: timeoutMs, stdio: "pipe" });
  const out = `${res.stdout ?? ""}${res.stderr ?? ""}`;
  const seconds = (Date.now() - started) / 1000;
  // Installs are where the time goes (better-sqlite3 compiles in a fresh npm project): show them.
  if (seconds >= 5) console.log(`  (${seconds.toFixed(1)} s: ${[cmd, ...args].join(" ").slice(0, 100)})`);
  if (res.error) fail(`${cmd} ${args.join(" ")}: ${res.error.message}\n${out}`);
  if (res.status !== 0 && !allowFailure)
    fail(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${res.status}\n${out.trim()}`);
  return { code: res.status, out };
}

/**
 * The environment of a user's shell: no CI (pnpm would freeze the lockfile) and none of the workspace's
 * npm_* / pnpm_* settings, except npm_config_nodedir: node-gyp must find Node's headers locally when
 * better-sqlite3 compiles (see .ci/run).
 */
export function userEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    const workspaceSetting = /^(npm|pnpm)_/i.test(k) && k !== "npm_config_nodedir";
    if (k !== "CI" && !workspaceSetting) env[k] = v;
  }
  return { ...env, ...extra };
}

export function readJson(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

export function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

export function listFiles(dir, base = dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(path, base));
    else files.push(relative(base, path));
  }
  return files;
}

/** Every file an `exports` map points at (conditions nested to any depth). */
export function exportTargets(value) {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).flatMap(exportTargets);
  return [];
}

export function withoutSource(value) {
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "source")
      .map(([k, v]) => [k, withoutSource(v)]),
  );
}

export function exportConditions(value) {
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...exportConditions(v)]);
}
