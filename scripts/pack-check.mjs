#!/usr/bin/env node
/**
 * Pack-and-install check: what a new user gets from the registry, tried before anything is published.
 *
 * Stages, in order (each prints `== stage: <name>` and its time; the first failure stops the run):
 *   pack        `pnpm pack` every public package (its `prepack` builds it) and check each tarball:
 *               LICENSE, README, CHANGELOG, every export target, no workspace-only `source` condition, every
 *               source map's sources shipped, engines/repository/homepage set; private packages stay unpacked.
 *   publint     publint (strict) on each tarball.
 *   attw        arethetypeswrong on each tarball, `--profile esm-only` (the packages are ESM only).
 *   npm         a fresh npm project (outside the workspace) that already uses the oldest drizzle-orm, pg and
 *               better-sqlite3 our ranges accept, installs the tarballs without ERESOLVE and without second
 *               copies of them, type-checks (skipLibCheck: driver types must still reach the user) and runs
 *               the README Quickstart on SQLite and on PostgreSQL; with the CLI built, `soniq mcp` first says
 *               how to install @soniq/mcp, then, with the @soniq/mcp tarball added, answers an MCP handshake
 *               with SONIQ_REDACT set (it refuses to serve without a redaction rule).
 *   pnpm        a fresh pnpm project following the README: the install without the build approval fails
 *               and the Quickstart says how to approve it; with `allowBuilds` it runs on SQLite and PostgreSQL.
 * Inside each project, `projectStages` (scripts/pack-check/project.mjs) lists what runs there; the CLI's
 * stage goes at the marked place in that file.
 *
 * Usage: node scripts/pack-check.mjs [--keep] [--only=<stage>,...]
 *   --keep leaves the temporary projects for inspection; --only runs `pack` and the named stages.
 * Env: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test): an admin URL; the Postgres runs
 * create a database of their own on it and drop it afterwards.
 */
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
import {
  assertSingleCopies,
  mcpHandshake,
  nodeEval,
  runProjectStages,
  writeSources,
} from "./pack-check/project.mjs";
import {
  exportConditions,
  exportTargets,
  fail,
  listFiles,
  ROOT,
  readJson,
  run,
  userEnv,
  withoutSource,
  writeJson,
} from "./pack-check/shared.mjs";

const KEEP = process.argv.includes("--keep");
/** `--only=npm,pnpm`: run these stages (after `pack`, which they all need); for working on one stage. */
const ONLY = process.argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const WORK = mkdtempSync(join(tmpdir(), "soniq-pack-check-"));
const TARBALLS = join(WORK, "tarballs");

/** The oldest versions the published ranges accept: an existing app that uses them must install us. */
const OLDEST = { "drizzle-orm": "0.44.0", pg: "8.16.0", "better-sqlite3": "12.0.0" };
/** The Node.js versions every package supports: the root package.json's `engines.node`, the one place it is set. */
const SUPPORTED_NODE = readJson(join(ROOT, "package.json")).engines.node;
/** What the fresh projects add to run TypeScript (the README tells users the same). */
const TOOLS = { tsx: "4.23.15", typescript: "6.0.3", "@types/node": "20.19.43" };

// ---------------------------------------------------------------------------------------------------
// stage: pack

/** Public packages: every workspace manifest under packages/ and apps/ (and bench/, bench/peers/) without private: true. */
function workspacePackages() {
  const dirs = [
    ...readdirSync(join(ROOT, "packages")).map((d) => join(ROOT, "packages", d)),
    ...readdirSync(join(ROOT, "apps")).map((d) => join(ROOT, "apps", d)),
    join(ROOT, "bench"),
    ...readdirSync(join(ROOT, "bench", "peers")).map((d) => join(ROOT, "bench", "peers", d)),
  ].filter((d) => existsSync(join(d, "package.json")));
  return dirs.map((dir) => ({ dir, manifest: readJson(join(dir, "package.json")) }));
}

const packed = new Map(); // name -> { tarball, dir (extracted), manifest (as packed) }

function stagePack() {
  mkdirSync(TARBALLS, { recursive: true });
  const all = workspacePackages();
  const isPrivate = all.filter((p) => p.manifest.private === true).map((p) => p.manifest.name);
  for (const expected of ["@soniq/e2e", "@soniq/example", "@soniq/bench", "@soniq/bench-liteque"]) {
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

    for (const required of ["LICENSE", "README.md", "CHANGELOG.md", "package.json"]) {
      if (!files.has(required)) say(`the tarball has no ${required}`);
    }
    if (pkg.engines?.node !== SUPPORTED_NODE)
      say(`engines.node is "${pkg.engines?.node}", not the root package.json's "${SUPPORTED_NODE}"`);
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

/** Tarballs a user's project installs: core, the two database backends and (once built) the CLI. */
function soniqTarballs() {
  const names = ["@soniq/core", "@soniq/backend-sqlite", "@soniq/backend-postgres"];
  if (existsSync(join(ROOT, "packages/cli/dist/bin.js"))) names.push("@soniq/cli");
  return names.map((name) => {
    const found = packed.get(name);
    if (!found) fail(`${name} was not packed`);
    return found.tarball;
  });
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
  if (existsSync(join(ROOT, "packages/cli/dist/bin.js"))) await stageNpmMcp(project, env);
}

/** The CLI's optional peer @soniq/mcp, installed afterwards as its README says: `soniq mcp` then serves. */
async function stageNpmMcp(project, env) {
  const mcp = packed.get("@soniq/mcp");
  if (!mcp) fail("@soniq/mcp was not packed");
  const { out } = run("npm", ["install", "--no-audit", "--no-fund", mcp.tarball], { cwd: project, env });
  if (/ERESOLVE|peer dep/i.test(out)) fail(`npm reported a peer conflict installing @soniq/mcp:\n${out}`);
  if (existsSync(join(project, "node_modules/@soniq/mcp/node_modules/@soniq/core")))
    fail("@soniq/mcp installed its own @soniq/core instead of sharing the app's");
  const started = Date.now();
  const server = await mcpHandshake(project, env);
  console.log(
    `  ok: soniq mcp with @soniq/mcp ${server.version} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
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

  // pnpm picks the newest better-sqlite3 the backend's `^12 || ^13` allows, 13, which needs Node 22 (npm honours
  // its `engines`, pnpm does not): on Node 20 the app adds better-sqlite3 12 itself, as the docs tell pnpm users.
  const node20 = Number(process.versions.node.split(".")[0]) < 22;
  const driver = node20 ? ["better-sqlite3@^12"] : [];
  // Without the approval pnpm refuses better-sqlite3's build; the Quickstart must then say what to do.
  const blocked = run("pnpm", ["add", ...driver, ...soniqTarballs()], {
    cwd: project,
    env,
    allowFailure: true,
  });
  if (blocked.code === 0 || !/better-sqlite3/.test(blocked.out))
    fail(`pnpm was expected to refuse better-sqlite3's build without approval:\n${blocked.out}`);
  writeSources(project);
  if (node20) await probeUnbuilt(project, env);

  // The README's step: approve the build in pnpm-workspace.yaml, install again.
  writeFileSync(join(project, "pnpm-workspace.yaml"), workspace(true));
  run("pnpm", ["install"], { cwd: project, env });
  assertSingleCopies(project);
  await runProjectStages(project);
}

/** better-sqlite3 12 without its build: opening the database says how to approve it (13 ships its binaries). */
async function probeUnbuilt(project, env) {
  const probe = `import { sqliteBackend } from "@soniq/backend-sqlite";
try { sqliteBackend({ filename: "./soniq.db" }); console.log("opened"); } catch (e) { console.log(e.message); }`;
  const { out: hint } = nodeEval(project, probe, env);
  for (const needed of ["allowBuilds", "pnpm approve-builds", "npm rebuild better-sqlite3"]) {
    if (!hint.includes(needed))
      fail(`without the build, opening the database should mention ${needed}:\n${hint}`);
  }
  console.log("  ok: without the build approval, opening the database says how to approve it");
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
