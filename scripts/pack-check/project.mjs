/**
 * What runs inside a fresh project once the tarballs are installed: a type-check that needs the driver
 * types, and the README Quickstart on SQLite and on PostgreSQL. `projectStages` lists them in order; the
 * CLI's stage goes at the marked place.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_URL, fail, ROOT, RUN_TIMEOUT_MS, run, userEnv, writeJson } from "./shared.mjs";

/**
 * The README's Quickstart (docs/snippets/quickstart.ts, which the README shows verbatim: docs/test/snippets.test.ts
 * checks that), and its PostgreSQL variant (the two lines the README says to swap).
 */
function quickstartSources() {
  const sqlite = readFileSync(join(ROOT, "docs", "snippets", "quickstart.ts"), "utf8");
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

export function writeSources(project) {
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
export function nodeEval(cwd, code, env) {
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
    // The `soniq` command from the installed @soniq/cli tarball (present once the CLI is built).
    ...cliStage(),
  ];
}

/** A module as `soniq worker` takes it: the app's Soniq instance (its backend from SONIQ_DATABASE_URL) and a job. */
const JOBS_MODULE = `import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const url = process.env.SONIQ_DATABASE_URL ?? "";
export const soniq = new Soniq({
  backend: url.startsWith("postgres")
    ? postgresBackend({ connectionString: url })
    : sqliteBackend({ filename: "./soniq.db" }),
});
export const greet = soniq.job("demo.greet", async ({ name }) => ({ greeted: name }));
`;

/** Enqueues one job through the module, as the app would, then closes. */
const ENQUEUE = `import { greet, soniq } from "./jobs.js";
const { id } = await greet.enqueue({ name: "ada" });
console.log(id);
await soniq.close();
`;

/** Runs `soniq <args>` from the project's node_modules/.bin, as `npx soniq` would. */
function soniqCli(project, args, env, { allowFailure = false } = {}) {
  return run(join(project, "node_modules/.bin/soniq"), args, {
    cwd: project,
    env,
    timeoutMs: RUN_TIMEOUT_MS,
    allowFailure,
  });
}

/** `soniq worker ./jobs.js` until the job is done (asked through `soniq jobs show --json`), then SIGTERM: exit 0. */
function runCliWorker(project, jobId, env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(project, "node_modules/.bin/soniq"), ["worker", "./jobs.js"], {
      cwd: project,
      env,
      stdio: "pipe",
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      out += chunk;
    });
    let signalled = false;
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    const poll = setInterval(() => {
      if (signalled) return;
      const shown = soniqCli(project, ["jobs", "show", jobId, "--json"], env);
      if (JSON.parse(shown.out).status === "done") {
        signalled = true;
        child.kill("SIGTERM");
      } else if (Date.now() > deadline) {
        child.kill("SIGKILL");
      }
    }, 500);
    child.on("exit", (code, signal) => {
      clearInterval(poll);
      if (!signalled)
        reject(new Error(`soniq worker exited (${code ?? signal}) before the job was done:\n${out}`));
      else if (code !== 0)
        reject(new Error(`soniq worker exited ${code ?? signal} after SIGTERM, not 0:\n${out}`));
      else resolvePromise(out);
    });
  });
}

/** help, setup, a job enqueued by the app and run by `soniq worker`, then `soniq status` showing it done. */
async function cliRound(project, env) {
  writeFileSync(join(project, "jobs.js"), JOBS_MODULE);
  writeFileSync(join(project, "enqueue.js"), ENQUEUE);
  const setup = soniqCli(project, ["setup"], env);
  if (!/migration|up to date|applied/i.test(setup.out))
    fail(`soniq setup printed nothing useful:\n${setup.out}`);
  const { out: id } = run(process.execPath, ["enqueue.js"], { cwd: project, env, timeoutMs: RUN_TIMEOUT_MS });
  const served = await runCliWorker(project, id.trim(), env);
  if (!served.includes("demo.greet")) fail(`soniq worker did not say which jobs it serves:\n${served}`);
  const status = soniqCli(project, ["status", "--json"], env);
  const { stats } = JSON.parse(status.out);
  if (stats.done !== 1) fail(`soniq status --json should count one done job:\n${status.out}`);
  soniqCli(project, ["status"], env);
}

/** The CLI's stage, present only once the CLI is built (`packages/cli/dist/bin.js`). */
function cliStage() {
  if (!existsSync(join(ROOT, "packages/cli/dist/bin.js"))) return [];
  return [
    [
      "soniq CLI (embedded SQLite default)",
      async (project) => {
        const help = run(join(project, "node_modules/.bin/soniq"), ["--help"], {
          cwd: project,
          env: userEnv(),
        });
        for (const command of ["setup", "worker", "status", "dead-letter"]) {
          if (!help.out.includes(command)) fail(`soniq --help does not list ${command}:\n${help.out}`);
        }
        rmSync(join(project, "soniq.db"), { force: true });
        await cliRound(project, userEnv());
        // @soniq/mcp is an optional peer of the CLI, not installed here: `soniq mcp` must say how to get it
        // (--no-redact: without a redaction rule it would refuse before looking for the package).
        const mcp = soniqCli(project, ["mcp", "--no-redact"], userEnv(), { allowFailure: true });
        if (mcp.code !== 1 || !mcp.out.includes("npm install @soniq/mcp"))
          fail(
            `without @soniq/mcp, soniq mcp should exit 1 saying "npm install @soniq/mcp" (exit ${mcp.code}):\n${mcp.out}`,
          );
      },
    ],
    [
      "soniq CLI (PostgreSQL)",
      (project) => withDatabase((url) => cliRound(project, userEnv({ SONIQ_DATABASE_URL: url }))),
    ],
  ];
}

/**
 * `soniq mcp` with the @soniq/mcp tarball installed beside the CLI, configured as the README's client config
 * (SONIQ_REDACT in its env): it names the redaction rule on stderr, answers an MCP initialize request on stdout
 * as server "soniq", and exits 0 once stdin closes.
 */
export function mcpHandshake(project, env) {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "pack-check", version: "1.0.0" },
    },
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(project, "node_modules/.bin/soniq"), ["mcp"], {
      cwd: project,
      env: { ...env, SONIQ_REDACT: "password,**.token" },
      stdio: "pipe",
    });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) child.stdin.end();
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      let reply;
      try {
        reply = JSON.parse(out.split("\n")[0] ?? "");
      } catch {}
      if (
        code !== 0 ||
        reply?.result?.serverInfo?.name !== "soniq" ||
        !err.includes("redacting paths: password, **.token")
      )
        reject(
          new Error(`soniq mcp did not answer an initialize request (exit ${code ?? signal}):\n${out}${err}`),
        );
      else resolvePromise(reply.result.serverInfo);
    });
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
  });
}

export async function runProjectStages(project) {
  for (const [name, stage] of projectStages()) {
    const started = Date.now();
    await stage(project);
    console.log(`  ok: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}

/** No package of ours may bring a second copy of a library the app shares with it. */
export function assertSingleCopies(project) {
  for (const name of ["@soniq/backend-sqlite", "@soniq/backend-postgres"]) {
    for (const dep of ["drizzle-orm", "pg", "better-sqlite3", "@soniq/core"]) {
      const nested = join(project, "node_modules", name, "node_modules", dep);
      if (existsSync(nested))
        fail(`${name} installed its own ${dep} instead of sharing the app's (${nested})`);
    }
  }
}
