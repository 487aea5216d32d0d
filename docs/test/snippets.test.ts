/**
 * Every code sample on the site is a file in docs/snippets/, shown on its page with VitePress's
 * `<<< @/snippets/<file>` include, so a page cannot hold code that no test ran. This file:
 * - checks that each snippet is listed below, shown on a page, and that no page writes a code sample inline;
 * - type-checks every snippet against the packages' source;
 * - runs each runnable one (tsx, in a temporary working directory, on memory or the embedded SQLite; the
 *   transactional PostgreSQL sample on a database of its own) and compares what it prints with its `// -> `
 *   lines, every printed id written `<id>`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const docs = fileURLToPath(new URL("..", import.meta.url));
const repo = join(docs, "..");
const snippetDir = join(docs, "snippets");
const tsxLoader = pathToFileURL(join(docs, "node_modules", "tsx", "dist", "loader.mjs")).href;
const vitestBin = join(docs, "node_modules", ".bin", "vitest");
const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** How each snippet is checked beyond the type-check. */
type How =
  | {
      run: {
        env?: NodeJS.ProcessEnv;
        stopWhen?: RegExp;
        postgres?: true;
        /** What the run left in its working directory or database, beyond what it printed. */
        after?: (cwd: string, databaseUrl: string | undefined) => Promise<void> | void;
      };
    }
  | { own: string }
  | { typecheckOnly: string };

const SNIPPETS: Record<string, How> = {
  "quickstart.ts": {
    run: {
      stopWhen: /emails\.send_welcome done:/,
      after: (cwd) =>
        expect(sqliteRows(join(cwd, "soniq.db"), "SELECT job_name, status FROM soniq_jobs")).toEqual([
          { job_name: "emails.send_welcome", status: "done" },
        ]),
    },
  },
  "retries.ts": { run: {} },
  "tx-sqlite.ts": {
    run: {
      after: (cwd) => {
        const db = join(cwd, "app.db");
        expect(sqliteRows(db, "SELECT id FROM orders")).toEqual([{ id: 1 }]);
        expect(sqliteRows(db, "SELECT job_name, args FROM soniq_jobs")).toEqual([
          { job_name: "orders.send_invoice", args: '{"orderId":1}' },
        ]);
      },
    },
  },
  "tx-postgres.ts": {
    run: {
      postgres: true,
      after: async (_cwd, url) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const orders = await client.query("SELECT id FROM orders");
          const jobs = await client.query("SELECT job_name, args FROM soniq_jobs");
          expect(orders.rows).toHaveLength(1);
          expect(jobs.rows).toEqual([
            { job_name: "orders.send_invoice", args: { orderId: orders.rows[0].id } },
          ]);
        } finally {
          await client.end();
        }
      },
    },
  },
  "results.ts": { run: {} },
  "dead-letter.ts": { run: {} },
  "durable-steps.ts": { run: {} },
  "versions.ts": { run: {} },
  "workflows.ts": { run: {} },
  "recurring.ts": { run: {} },
  "queue-controls.ts": { run: {} },
  "tracing.ts": { run: {} },
  "dashboard.ts": { run: {} },
  "choose-backend.ts": { run: { env: { SONIQ_DATABASE_URL: "" } } },
  "webhook-verify.ts": { own: "docs/snippet-webhook-verify" },
  "conformance.test.ts": { own: "docs/snippet-conformance" },
  "webhooks.ts": {
    typecheckOnly: "registers an endpoint at a public https URL, which nothing here receives",
  },
  "jobs-module.ts": { typecheckOnly: "a module for `soniq worker`: it defines jobs and runs nothing itself" },
  "past-one-machine.ts": { typecheckOnly: "names a PgBouncer, a primary and a replica that are not here" },
  // The samples of the reference pages (docs/reference/*.md), which the package READMEs held before the site.
  "ref-backend-memory-1.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-backend-memory-2.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-backend-memory-3.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-backend-postgres-1.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-backend-postgres-2.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-backend-postgres-3.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-backend-postgres-4.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-backend-sqlite-1.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-backend-sqlite-2.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-backend-sqlite-3.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-backend-sqlite-4.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-cli-1.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-cli-2.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-core-1.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-2.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-3.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-4.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-core-5.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-6.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-7.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-8.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-core-9.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-dashboard-1.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-dashboard-2.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-dashboard-3.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-dashboard-4.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-mcp-1.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-opentelemetry-1.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-opentelemetry-2.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-opentelemetry-3.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-prometheus-1.ts": { typecheckOnly: "a sample from a reference page, type-checked only" },
  "ref-testkit-1.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-testkit-2.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-testkit-3.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-testkit-4.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
  "ref-testkit-5.ts": {
    typecheckOnly: "a fragment of a reference page; the names it uses are declared around it",
  },
};

/** Every row a query answers on an SQLite file a snippet left behind, read-only. */
function sqliteRows(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const promised = (file: string) =>
  readFileSync(join(snippetDir, file), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("// -> "))
    .map((line) => line.slice("// -> ".length));

/** Every markdown page of the site (not the generated API reference), relative to docs/. */
function pages(dir = docs, prefix = ""): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (["node_modules", "api", "snippets", "test", ".vitepress"].includes(entry.name) && prefix === "")
      continue;
    if (entry.isDirectory()) found.push(...pages(join(dir, entry.name), `${prefix}${entry.name}/`));
    else if (entry.name.endsWith(".md")) found.push(`${prefix}${entry.name}`);
  }
  return found;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, stopWhen?: RegExp): Promise<Run> {
  return new Promise<Run>((resolve, reject) => {
    const child: ChildProcess = spawn(args[0] as string, args.slice(1), {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let stopping = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not finish in 60 s\n${stdout}\n${stderr}`));
    }, 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      // A worker that runs until stopped is stopped the way an operator would, once it did its work.
      if (!stopping && stopWhen?.test(stdout)) {
        stopping = true;
        child.kill("SIGTERM");
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("docs/snippets", () => {
  const work = mkdtempSync(join(tmpdir(), "soniq-docs-snippets-"));
  let database: { url: string; drop(): Promise<void> } | undefined;

  beforeAll(async () => {
    const name = `soniq_docs_${randomBytes(6).toString("hex")}`;
    const admin = async (sql: string) => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };
    await admin(`CREATE DATABASE ${name}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    database = { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  });
  afterAll(async () => {
    rmSync(work, { recursive: true, force: true });
    await database?.drop();
  });

  it("docs/snippets-listed: every file in docs/snippets is listed here, and every listed one exists", () => {
    expect(readdirSync(snippetDir).sort()).toEqual(Object.keys(SNIPPETS).sort());
  });

  it("docs/snippets-shown: each snippet is shown on a page, and every page's include names a snippet", () => {
    const included = new Set<string>();
    for (const page of pages()) {
      for (const m of readFileSync(join(docs, page), "utf8").matchAll(/^<<< @\/snippets\/([^\s{#]+)/gm)) {
        expect(Object.keys(SNIPPETS), `${page} includes ${m[1]}`).toContain(m[1]);
        included.add(m[1] as string);
      }
    }
    expect([...included].sort()).toEqual(Object.keys(SNIPPETS).sort());
  });

  it("docs/no-inline-code: no page writes a TypeScript or JavaScript sample inline", () => {
    const inline = pages().filter((page) =>
      /^```(ts|typescript|js|javascript|mjs)\b/m.test(readFileSync(join(docs, page), "utf8")),
    );
    expect(inline).toEqual([]);
  });

  it("docs/readme-quickstart: the root README's only TypeScript block is docs/snippets/quickstart.ts, verbatim", () => {
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    const blocks = [...readme.matchAll(/^```(ts|typescript|js|javascript|mjs)\b[^\n]*\n([\s\S]*?)^```$/gm)];
    expect(blocks.map((b) => b[2])).toEqual([readFileSync(join(snippetDir, "quickstart.ts"), "utf8")]);
  });

  it("docs/snippets-typecheck: every snippet type-checks against the packages' source", () => {
    const { config } = ts.readConfigFile(join(repo, "tsconfig.base.json"), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, repo);
    const program = ts.createProgram({
      rootNames: Object.keys(SNIPPETS).map((file) => join(snippetDir, file)),
      options: { ...parsed.options, customConditions: ["source"], noEmit: true },
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName.startsWith(snippetDir))
      .map((d) => {
        const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
        const file = d.file ? d.file.fileName.slice(snippetDir.length + 1) : "?";
        return `${file}:${where ? where.line + 1 : "?"}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
      });
    expect(diagnostics).toEqual([]);
  }, 60_000);

  for (const [file, how] of Object.entries(SNIPPETS)) {
    if (!("run" in how)) continue;
    // Two at a time (maxConcurrency in vitest.config.ts).
    it.concurrent(`docs/snippet-${file.replace(/\.ts$/, "")}: prints what its comments say`, async ({
      expect,
    }) => {
      const cwd = mkdtempSync(join(work, `${file}-`));
      const env = { ...how.run.env, ...(how.run.postgres ? { DATABASE_URL: database?.url } : {}) };
      const args = [process.execPath, "--import", tsxLoader, "--conditions=source", join(snippetDir, file)];
      const result = await run(args, cwd, env, how.run.stopWhen);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const lines = promised(file);
      expect(lines.length).toBeGreaterThan(0);
      expect(result.stdout.replace(UUID, "<id>").trimEnd().split("\n")).toEqual(lines);
      await how.run.after?.(cwd, database?.url);
    }, 60_000);
  }

  it("docs/snippet-choose-backend-urls: memory and a PostgreSQL URL load those backends", async () => {
    const file = join(snippetDir, "choose-backend.ts");
    const args = [process.execPath, "--import", tsxLoader, "--conditions=source", file];
    const memory = await run(args, mkdtempSync(join(work, "choose-memory-")), {
      SONIQ_DATABASE_URL: "memory",
    });
    const postgres = await run(args, mkdtempSync(join(work, "choose-pg-")), {
      SONIQ_DATABASE_URL: database?.url,
    });
    for (const result of [memory, postgres]) {
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    }
    expect(memory.stdout).toBe("memory false\n");
    expect(postgres.stdout).toBe("postgres true\n");
  }, 60_000);

  it("docs/snippet-webhook-verify: accepts a request signed as the page says, refuses a changed one", async () => {
    const { verified } = (await import("../snippets/webhook-verify.js")) as {
      verified: (body: string, headers: Record<string, string | undefined>) => boolean;
    };
    const secret = "whsec_docs_0123456789abcdef";
    process.env.SONIQ_WEBHOOK_SECRET = secret;
    try {
      const body = JSON.stringify({ event: "job.dead_letter", data: { jobId: "j1" } });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const sign = (event: string, payload: string) =>
        `v2=${createHmac("sha256", secret).update(`v2:${timestamp}:d-1:${event}:${payload}`).digest("hex")}`;
      const headers = (signature: string, event = "job.dead_letter") => ({
        "x-webhook-signature": signature,
        "x-webhook-timestamp": timestamp,
        "x-webhook-delivery": "d-1",
        "x-webhook-event": event,
      });
      expect(verified(body, headers(sign("job.dead_letter", body)))).toBe(true);
      expect(verified(`${body} `, headers(sign("job.dead_letter", body)))).toBe(false);
      expect(verified(body, headers(sign("job.dead_letter", body), "job.completed"))).toBe(false);
      expect(verified(body, headers("v2=00"))).toBe(false);
    } finally {
      delete process.env.SONIQ_WEBHOOK_SECRET;
    }
  });

  it("docs/snippet-conformance: the conformance suite runs and passes on the stand-in backend", async () => {
    const config = join(docs, "test", "conformance-snippet.config.ts");
    const result = await run([vitestBin, "run", "--config", config], docs, { NO_COLOR: "1" });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Test Files {2}1 passed \(1\)/);
    expect(result.stdout).toMatch(/Tests {2}[1-9]\d+ passed \(\d+\)/);
    expect(result.stdout).not.toContain("skipped");
  }, 60_000);
});
