#!/usr/bin/env node
/**
 * Pack-and-install check: what a new user gets from the registry, tried before anything is published.
 *
 * Stages, in order (each prints `== stage: <name>` and its time; the first failure stops the run):
 *   pack        `pnpm pack` every public package (its `prepack` builds it) and check each tarball:
 *               LICENSE, README, every export target, no workspace-only `source` condition, every
 *               source map's sources shipped, engines/repository/homepage set; private packages stay unpacked.
 *   publint     publint (strict) on each tarball.
 *   attw        arethetypeswrong on each tarball, `--profile esm-only` (the packages are ESM only).
 *   npm         a fresh npm project (outside the workspace) that already uses the oldest drizzle-orm, pg and
 *               better-sqlite3 our ranges accept, installs the tarballs without ERESOLVE and without second
 *               copies of them, type-checks (skipLibCheck: driver types must still reach the user) and runs
 *               the README Quickstart on SQLite and on PostgreSQL.
 *   pnpm        a fresh pnpm project following the README: the install without the build approval fails
 *               and the Quickstart says how to approve it; with `allowBuilds` it runs on SQLite and PostgreSQL.
 * Inside each project, `projectStages` lists what runs there; the CLI's stage goes at the marked place.
 *
 * Usage: node scripts/pack-check.mjs [--keep] [--only=<stage>,...]
 *   --keep leaves the temporary projects for inspection; --only runs `pack` and the named stages.
 * Env: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test): an admin URL; the Postgres runs
 * create a database of their own on it and drop it afterwards.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const KEEP = process.argv.includes("--keep");
/** `--only=npm,pnpm`: run these stages (after `pack`, which they all need); for working on one stage. */
const ONLY = process.argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const WORK = mkdtempSync(join(tmpdir(), "soniq-pack-check-"));
const TARBALLS = join(WORK, "tarballs");

/** The oldest versions the published ranges accept: an existing app that uses them must install us. */
const OLDEST = { "drizzle-orm": "0.44.0", pg: "8.16.0", "better-sqlite3": "12.0.0" };
/** What the fresh projects add to run TypeScript (the README tells users the same). */
const TOOLS = { tsx: "4.23.15", typescript: "6.0.3", "@types/node": "20.19.43" };
/** Bounds for waiting on a child process; they only end a run that hangs, nothing waits for them. */
const INSTALL_TIMEOUT_MS = 6 * 60_000;
const RUN_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------------------------------
// helpers

function fail(message) {
  throw new Error(message);
}

/** Runs a command to completion; returns { code, out } (stdout and stderr interleaved). */
function run(
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
function userEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    const workspaceSetting = /^(npm|pnpm)_/i.test(k) && k !== "npm_config_nodedir";
    if (k !== "CI" && !workspaceSetting) env[k] = v;
  }
  return { ...env, ...extra };
}

function readJson(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function listFiles(dir, base = dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(path, base));
    else files.push(relative(base, path));
  }
  return files;
}

/** Every file an `exports` map points at (conditions nested to any depth). */
function exportTargets(value) {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).flatMap(exportTargets);
  return [];
}

function withoutSource(value) {
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "source")
      .map(([k, v]) => [k, withoutSource(v)]),
  );
}

function exportConditions(value) {
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...exportConditions(v)]);
}

// ---------------------------------------------------------------------------------------------------
// stage: pack

/** Public packages: every workspace manifest under packages/ and apps/ (and bench/) without private: true. */
function workspacePackages() {
  const dirs = [
    ...readdirSync(join(ROOT, "packages")).map((d) => join(ROOT, "packages", d)),
    ...readdirSync(join(ROOT, "apps")).map((d) => join(ROOT, "apps", d)),
    join(ROOT, "bench"),
  ].filter((d) => existsSync(join(d, "package.json")));
  return dirs.map((dir) => ({ dir, manifest: readJson(join(dir, "package.json")) }));
}

const packed = new Map(); // name -> { tarball, dir (extracted), manifest (as packed) }

function stagePack() {
  mkdirSync(TARBALLS, { recursive: true });
  const all = workspacePackages();
  const isPrivate = all.filter((p) => p.manifest.private === true).map((p) => p.manifest.name);
  for (const expected of ["@soniq/e2e", "@soniq/example", "@soniq/bench"]) {
    if (!isPrivate.includes(expected)) fail(`${expected} must be "private": true so it is never packed`);
  }
  const problems = [];
  for (const { dir, manifest } of all.filter((p) => p.manifest.private !== true)) {
    const before = new Set(readdirSync(TARBALLS));
    run("pnpm", ["pack", "--pack-destination", TARBALLS], { cwd: dir });
    const tarball = readdirSync(TARBALLS).find((f) => !before.has(f) && f.endsWith(".tgz"));
    if (!tarball) fail(`pnpm pack produced no tarball for ${manifest.name}`);
    const extracted = join(WORK, "extracted", manifest.name.replace("/", "+"));
    mkdirSync(extracted, { recursive: true });
    run("tar", ["-xzf", join(TARBALLS, tarball), "-C", extracted]);
    const pkgDir = join(extracted, "package");
    const pkg = readJson(join(pkgDir, "package.json"));
    const files = new Set(listFiles(pkgDir));
    const say = (msg) => problems.push(`${manifest.name}: ${msg}`);

    for (const required of ["LICENSE", "README.md", "package.json"]) {
      if (!files.has(required)) say(`the tarball has no ${required}`);
    }
    if (!/^>=20\.19(\.0)?$/.test(pkg.engines?.node ?? ""))
      say(`engines.node is "${pkg.engines?.node}", not >=20.19`);
    if (!pkg.repository?.url || !pkg.homepage) say("repository and homepage must be set");
    if (!pkg.license || !pkg.keywords?.length) say("license and keywords must be set");
    if (exportConditions(pkg.exports).includes("source"))
      say('the packed exports keep the workspace-only "source" condition (set publishConfig.exports)');
    // publishConfig.exports replaces the whole map when packed: it must be `exports` minus "source".
    const expected = JSON.stringify(withoutSource(manifest.exports));
    if (JSON.stringify(pkg.exports) !== expected)
      say(
        `the packed exports ${JSON.stringify(pkg.exports)} are not the workspace's minus "source": ${expected}`,
      );
    for (const target of exportTargets(pkg.exports)) {
      if (!files.has(target.replace(/^\.\//, "")))
        say(`exports point at ${target}, which is not in the tarball`);
    }
    if (![...files].some((f) => f.startsWith("dist/") && f.endsWith(".js")))
      say("the tarball has no dist/*.js: was it built?");
    // Source maps must resolve inside the tarball, or debuggers show nothing.
    for (const map of [...files].filter((f) => f.endsWith(".map"))) {
      const { sources = [] } = readJson(join(pkgDir, map));
      for (const source of sources) {
        const shipped = relative(pkgDir, resolve(pkgDir, dirname(map), source));
        if (!files.has(shipped)) say(`${map} points at ${source}, which is not in the tarball`);
      }
    }
    for (const [dep, spec] of Object.entries({ ...pkg.dependencies, ...pkg.peerDependencies })) {
      if (String(spec).startsWith("workspace:")) say(`${dep} is still "${spec}" in the packed manifest`);
    }
    packed.set(manifest.name, { tarball: join(TARBALLS, tarball), dir: pkgDir, manifest: pkg });
    console.log(`  ${manifest.name}: ${tarball} (${files.size} files)`);
  }
  console.log(`  not packed (private): ${isPrivate.join(", ")}`);
  if (problems.length) fail(`tarball problems:\n  ${problems.join("\n  ")}`);
}

// ---------------------------------------------------------------------------------------------------
// stage: publint

/** The CLI's bin file comes with packages/cli/src/bin.ts (the CLI branch); until then its absence is expected. */
function cliBinPending() {
  return !existsSync(join(ROOT, "packages/cli/src/bin.ts"));
}

async function stagePublint() {
  const { publint } = await import("publint");
  const { formatMessage } = await import("publint/utils");
  const problems = [];
  for (const [name, { tarball, manifest }] of packed) {
    const bytes = readFileSync(tarball);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const { messages } = await publint({ pack: { tarball: buffer }, strict: true });
    for (const msg of messages) {
      const text = formatMessage(msg, manifest, { color: false }) ?? msg.code;
      const pendingBin = name === "@soniq/cli" && msg.code === "FILE_DOES_NOT_EXIST" && msg.path[0] === "bin";
      if (pendingBin && cliBinPending()) {
        console.log(`  note: ${name}: ${text} (expected until packages/cli/src/bin.ts lands)`);
        continue;
      }
      problems.push(`${name}: [${msg.type}] ${text}`);
    }
    console.log(`  ${name}: ${messages.length === 0 ? "clean" : `${messages.length} message(s)`}`);
  }
  if (problems.length) fail(`publint:\n  ${problems.join("\n  ")}`);
}

// ---------------------------------------------------------------------------------------------------
// stage: attw

function stageAttw() {
  const attw = join(ROOT, "node_modules/.bin/attw");
  const problems = [];
  for (const [name, { tarball }] of packed) {
    const args = [
      tarball,
      "--profile",
      "esm-only",
      "--no-definitely-typed",
      "--format",
      "ascii",
      "--no-color",
    ];
    const { code, out } = run(attw, args, { cwd: WORK, allowFailure: true });
    if (code !== 0) problems.push(`${name}:\n${out.trim()}`);
    else console.log(`  ${name}: no problems (esm-only profile)`);
  }
  if (problems.length) fail(`arethetypeswrong:\n${problems.join("\n")}`);
}

// ---------------------------------------------------------------------------------------------------
// fresh projects: what runs inside each

/** The README's Quickstart, verbatim, and its PostgreSQL variant (the two lines the README says to swap). */
function quickstartSources() {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const found = /```ts snippet=quickstart\n([\s\S]*?)```/.exec(readme);
  if (!found?.[1]) fail("README.md has no ```ts snippet=quickstart block");
  const sqlite = found[1];
  const swaps = [
    [
      'import { sqliteBackend } from "@soniq/backend-sqlite";',
      'import { postgresBackend } from "@soniq/backend-postgres";',
    ],
    [
      'sqliteBackend({ filename: "./soniq.db" })',
      'postgresBackend({ connectionString: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/app" })',
    ],
  ];
  let postgres = sqlite;
  for (const [from, to] of swaps) {
    if (!postgres.includes(from)) fail(`the README Quickstart no longer contains \`${from}\``);
    postgres = postgres.replace(from, to);
  }
  return { sqlite, postgres };
}

/**
 * Type errors a user must get even with `skipLibCheck: true`: they only appear when the driver types
 * (@types/pg, @types/better-sqlite3) come with the backends.
 */
const TYPES_PROBE = `import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";

// @ts-expect-error a pool must be a pg.Pool
postgresBackend({ pool: 42 });
// @ts-expect-error a database must be a better-sqlite3 Database
sqliteBackend({ database: "soniq.db" });
// @ts-expect-error pool options are pg's PoolConfig
postgresBackend({ connectionString: "postgres://x", poolConfig: { max: "four" } });
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
  },
  include: ["*.ts"],
};

function writeSources(project) {
  const { sqlite, postgres } = quickstartSources();
  writeFileSync(join(project, "quickstart.ts"), sqlite);
  writeFileSync(join(project, "quickstart-postgres.ts"), postgres);
  writeFileSync(join(project, "types-probe.ts"), TYPES_PROBE);
  writeJson(join(project, "tsconfig.json"), TSCONFIG);
}

/**
 * Runs the Quickstart (a worker that runs until SIGTERM) with tsx: waits for the job's `done` line,
 * sends SIGTERM, and expects a clean exit 0. Resolves to the output.
 */
function runQuickstart(project, file, env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(project, "node_modules/.bin/tsx"), [file], { cwd: project, env, stdio: "pipe" });
    let out = "";
    let signalled = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${file} did not finish within ${RUN_TIMEOUT_MS} ms:\n${out}`));
    }, RUN_TIMEOUT_MS);
    const onData = (chunk) => {
      out += chunk;
      if (!signalled && /emails\.send_welcome done: \{ sent: true, attempt: 1 \}/.test(out)) {
        signalled = true;
        child.kill("SIGTERM");
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (!signalled)
        reject(new Error(`${file} exited (${code ?? signal}) before its job was done:\n${out}`));
      else if (code !== 0)
        reject(new Error(`${file} exited ${code ?? signal} after SIGTERM, not 0:\n${out}`));
      else resolvePromise(out);
    });
  });
}

/** Runs a module with node in `cwd` (resolving packages from there). */
function nodeEval(cwd, code, env) {
  return run(process.execPath, ["--input-type=module", "-e", code], { cwd, env, timeoutMs: RUN_TIMEOUT_MS });
}

/** A database of its own for one run, created and dropped with the workspace's pg (the app may not list pg). */
async function withDatabase(fn) {
  const adminDir = join(ROOT, "packages/backend-postgres");
  const name = `soniq_pack_${randomBytes(5).toString("hex")}`;
  const url = new URL(ADMIN_URL);
  const admin = (sql) =>
    `import pg from "pg"; const c = new pg.Client({ connectionString: ${JSON.stringify(ADMIN_URL)} });` +
    ` await c.connect(); try { await c.query(${JSON.stringify(sql)}); } finally { await c.end(); }`;
  nodeEval(adminDir, admin(`CREATE DATABASE ${name}`), userEnv());
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    nodeEval(adminDir, admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), userEnv());
  }
}

/**
 * What runs inside a fresh project once the packages are installed. Add a stage by appending
 * `[name, (project) => ...]`.
 */
function projectStages() {
  return [
    ["typecheck", (project) => run(join(project, "node_modules/.bin/tsc"), ["-p", "."], { cwd: project })],
    [
      "quickstart (SQLite)",
      async (project) => {
        rmSync(join(project, "soniq.db"), { force: true });
        const out = await runQuickstart(project, "quickstart.ts", userEnv());
        if (!/enqueued \S+/.test(out)) fail(`the Quickstart printed no "enqueued <id>" line:\n${out}`);
        if (!/sending the welcome email/.test(out))
          fail(`the Quickstart's log line printed nothing:\n${out}`);
      },
    ],
    [
      "quickstart (PostgreSQL)",
      (project) =>
        withDatabase((url) =>
          runQuickstart(project, "quickstart-postgres.ts", userEnv({ DATABASE_URL: url })),
        ),
    ],
    // ---- CLI stage goes here (owned by the CLI branch) -------------------------------------------
    // When packages/cli ships dist/bin.js, add a stage that runs, in this same project:
    //   npx soniq --help, soniq setup, soniq worker ./jobs.js, soniq status
    // and install @soniq/cli's tarball in `npmProject` / `pnpmProject` (see `soniqTarballs`).
    // Until then `cliStage` returns nothing and the stage is absent.
    ...cliStage(),
  ];
}

/** The CLI's stage, present only once the CLI is built (`packages/cli/dist/bin.js`). */
function cliStage() {
  if (!existsSync(join(ROOT, "packages/cli/dist/bin.js"))) return [];
  return []; // the CLI branch fills this in
}

/** Tarballs a user's project installs: core and the two database backends. */
function soniqTarballs() {
  return ["@soniq/core", "@soniq/backend-sqlite", "@soniq/backend-postgres"].map((name) => {
    const found = packed.get(name);
    if (!found) fail(`${name} was not packed`);
    return found.tarball;
  });
}

async function runProjectStages(project) {
  for (const [name, stage] of projectStages()) {
    const started = Date.now();
    await stage(project);
    console.log(`  ok: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}

/** No package of ours may bring a second copy of a library the app shares with it. */
function assertSingleCopies(project) {
  for (const name of ["@soniq/backend-sqlite", "@soniq/backend-postgres"]) {
    for (const dep of ["drizzle-orm", "pg", "better-sqlite3", "@soniq/core"]) {
      const nested = join(project, "node_modules", name, "node_modules", dep);
      if (existsSync(nested))
        fail(`${name} installed its own ${dep} instead of sharing the app's (${nested})`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// stage: npm (an existing app on the oldest versions our ranges accept)

async function stageNpm() {
  const project = join(WORK, "npm-app");
  mkdirSync(project);
  writeJson(join(project, "package.json"), { name: "npm-app", private: true, type: "module" });
  const env = userEnv();
  const oldest = Object.entries(OLDEST).map(([n, v]) => `${n}@${v}`);
  run("npm", ["install", "--no-audit", "--no-fund", "-E", ...oldest], { cwd: project, env });
  const tools = Object.entries(TOOLS).map(([n, v]) => `${n}@${v}`);
  run("npm", ["install", "--no-audit", "--no-fund", "-D", "-E", ...tools], { cwd: project, env });
  const { out } = run("npm", ["install", "--no-audit", "--no-fund", ...soniqTarballs()], {
    cwd: project,
    env,
  });
  if (/ERESOLVE|peer dep/i.test(out)) fail(`npm reported a peer conflict:\n${out}`);
  const installed = readJson(join(project, "node_modules/drizzle-orm/package.json")).version;
  if (installed !== OLDEST["drizzle-orm"])
    fail(`the app's drizzle-orm ${OLDEST["drizzle-orm"]} was replaced by ${installed}`);
  assertSingleCopies(project);
  writeSources(project);
  await runProjectStages(project);
}

// ---------------------------------------------------------------------------------------------------
// stage: pnpm (a new app, following the README)

async function stagePnpm() {
  const project = join(WORK, "pnpm-app");
  mkdirSync(project);
  writeJson(join(project, "package.json"), { name: "pnpm-app", private: true, type: "module" });
  // Stand-in for the registry: the tarballs, also for the backends' dependency on @soniq/core.
  const overrides = `overrides:\n  "@soniq/core": "file:${packed.get("@soniq/core")?.tarball}"\n`;
  // esbuild (under tsx) needs no build script; the README's pnpm-workspace.yaml says so too.
  const workspace = (sqliteBuild) =>
    `${overrides}allowBuilds:\n${sqliteBuild ? "  better-sqlite3: true\n" : ""}  esbuild: false\n`;
  writeFileSync(join(project, "pnpm-workspace.yaml"), workspace(false));
  const env = userEnv();
  const tools = Object.entries(TOOLS).map(([n, v]) => `${n}@${v}`);
  run("pnpm", ["add", "-D", "-E", ...tools], { cwd: project, env });

  // Without the approval pnpm refuses better-sqlite3's build; the Quickstart must then say what to do.
  const blocked = run("pnpm", ["add", ...soniqTarballs()], { cwd: project, env, allowFailure: true });
  if (blocked.code === 0 || !/better-sqlite3/.test(blocked.out))
    fail(`pnpm was expected to refuse better-sqlite3's build without approval:\n${blocked.out}`);
  writeSources(project);
  const probe = `import { sqliteBackend } from "@soniq/backend-sqlite";
try { sqliteBackend({ filename: "./soniq.db" }); console.log("opened"); } catch (e) { console.log(e.message); }`;
  const { out: hint } = nodeEval(project, probe, env);
  for (const needed of ["allowBuilds", "pnpm approve-builds", "npm rebuild better-sqlite3"]) {
    if (!hint.includes(needed))
      fail(`without the build, opening the database should mention ${needed}:\n${hint}`);
  }
  console.log("  ok: without the build approval, opening the database says how to approve it");

  // The README's step: approve the build in pnpm-workspace.yaml, install again.
  writeFileSync(join(project, "pnpm-workspace.yaml"), workspace(true));
  run("pnpm", ["install"], { cwd: project, env });
  assertSingleCopies(project);
  await runProjectStages(project);
}

// ---------------------------------------------------------------------------------------------------

const STAGES = [
  ["pack", stagePack],
  ["publint", stagePublint],
  ["attw", stageAttw],
  ["npm", stageNpm],
  ["pnpm", stagePnpm],
];

const startedAll = Date.now();
let exitCode = 0;
try {
  for (const [name, stage] of STAGES) {
    if (ONLY && name !== "pack" && !ONLY.includes(name)) continue;
    const started = Date.now();
    console.log(`== stage: ${name}`);
    await stage();
    console.log(`== stage: ${name} ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
  console.log(`pack-check: all stages passed in ${((Date.now() - startedAll) / 1000).toFixed(1)} s`);
} catch (err) {
  console.error(`pack-check FAILED: ${err instanceof Error ? err.message : String(err)}`);
  exitCode = 1;
} finally {
  if (KEEP) console.log(`kept: ${WORK}`);
  else rmSync(WORK, { recursive: true, force: true });
}
process.exitCode = exitCode;
