/**
 * `soniq mcp [--allow-writes]`: an MCP server on stdin/stdout for agents (Claude Desktop, IDE agents, ...).
 * One Soniq instance serves the session; it ends when the client closes stdin (or on SIGINT/SIGTERM), and
 * the instance is closed. stdout carries the protocol only: console output (the app module's included) goes
 * to stderr while it runs. The server is the @soniq/mcp package (an optional peer dependency: it brings the
 * MCP SDK, zod and ajv), loaded only when this command runs, from the application's project first; without
 * it the command exits 1 saying how to install it.
 *
 * An agent sends what it reads to its model provider, so the command refuses to serve without a redaction rule
 * (the module's `redact`, or --redact / SONIQ_REDACT paths) unless --no-redact asks for raw values; the rule in
 * force is printed on stderr at start.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Soniq } from "@soniq/core";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError } from "../errors.js";
import type { Io } from "../output.js";
import { REDACT_REMEDIES, redacting, redactionLine } from "../redaction.js";

const TOOLS_HELP = `
Needs @soniq/mcp in your project (npm install @soniq/mcp).

Read tools (always): stats, queues, jobs, job (with its durable steps), explain, dead_letters, dead_letter,
schedules, schedule_history, flows, flow, audit. Write tools (only with --allow-writes): replay, replay_where
(both with steps: keep|discard and resolve), purge, purge_where, cancel_job, cancel_flow, signal, pause_queue,
resume_queue. Without --allow-writes the write tools are not listed and a call to one is refused. replay_where and purge_where are dry runs (a count) unless called with confirm: true.
Every write is audited with actor mcp:<client name>.

Redaction: the agent sends what it reads to its model provider, so a rule is required: the app's redact
(--module), or field paths (--redact / SONIQ_REDACT=password,**.token); --no-redact serves raw values. The rule
in force is printed on stderr at start (stdout is the protocol).

Client config (e.g. Claude Desktop's claude_desktop_config.json):
  { "mcpServers": { "soniq": { "command": "npx",
      "args": ["soniq", "mcp", "--database-url", "postgres://localhost/app"],
      "env": { "SONIQ_REDACT": "password,**.token" } } } }

Examples:
  SONIQ_REDACT=password,**.token soniq mcp --database-url postgres://localhost/app
  soniq mcp --module ./src/soniq.ts --allow-writes`;

export const MCP_PACKAGE = "@soniq/mcp";

/** What this command uses of @soniq/mcp (its `startMcpServer`). */
export type StartMcpServer = (
  soniq: Soniq,
  options: { allowWrites: boolean },
) => Promise<{ readonly closed: Promise<void>; close(): Promise<void> }>;

/** Imports a module by specifier: `import()` itself, or a stand-in in tests. */
export type Importer = (specifier: string) => Promise<unknown>;

/** The package as the application sees it (its own node_modules first), else beside the CLI. */
function locate(): string {
  try {
    return pathToFileURL(createRequire(join(process.cwd(), "package.json")).resolve(MCP_PACKAGE)).href;
  } catch {
    return MCP_PACKAGE;
  }
}

/** `@soniq/mcp` itself was not found (rather than something it imports). */
function notInstalled(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    new RegExp(`(Cannot find (package|module) ['"]${MCP_PACKAGE}['"/])`).test(String(message))
  );
}

/** Loads @soniq/mcp's `startMcpServer`; a missing or unusable package is a CliError saying what to do. */
export async function loadMcp(load: Importer = (specifier) => import(specifier)): Promise<StartMcpServer> {
  let mod: Record<string, unknown>;
  try {
    mod = (await load(locate())) as Record<string, unknown>;
  } catch (err) {
    const message = notInstalled(err)
      ? `soniq mcp needs ${MCP_PACKAGE}. Install it in your project (npm install ${MCP_PACKAGE}).`
      : `${MCP_PACKAGE} is installed but could not be loaded (${err instanceof Error ? err.message : String(err)}). ` +
        `Reinstall it (npm install ${MCP_PACKAGE}).`;
    throw new CliError("SONIQ_CLI_MISSING_PACKAGE", message, { cause: err });
  }
  if (typeof mod.startMcpServer !== "function") {
    throw new CliError(
      "SONIQ_CLI_UNSUPPORTED",
      `this ${MCP_PACKAGE} exports no startMcpServer(). Upgrade ${MCP_PACKAGE}.`,
    );
  }
  return mod.startMcpServer as StartMcpServer;
}

/** Refused: an agent would read (and send to its model provider) raw values. `module` when it sets no redact. */
function refusal(module: string | undefined): CliError {
  const why = "agents send what they read (job args, results and errors) to their model provider";
  return new CliError(
    "SONIQ_CLI_REFUSED",
    module
      ? `refusing to serve MCP without redaction: ${module} sets no redact, and ${why}. Set redact in its ` +
          "new Soniq({ redact: [...] }), or pass --no-redact to serve raw values."
      : `refusing to serve MCP without redaction: ${why}; ${REDACT_REMEDIES} to serve raw values.`,
  );
}

/** Console output would corrupt the protocol on stdout: it goes to stderr for the session. */
function consoleToStderr(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => Object.assign(console, saved);
}

export function registerMcp(program: Command, io: Io): void {
  program
    .command("mcp")
    .description(
      "serve the MCP tools for agents on stdio (needs @soniq/mcp; read-only unless --allow-writes)",
    )
    .option(
      "--allow-writes",
      "offer the write tools: replay, purge, cancel a job or flow, pause, resume (audited as mcp:<client>)",
    )
    .addHelpText("after", TOOLS_HELP)
    .action(async (o: { allowWrites?: boolean }, command: Command) => {
      const ctx = Context.of(command, io);
      // Decided before anything loads or opens; an app module's own redact is known once it is loaded.
      if (!ctx.module && ctx.redact.kind === "unset") throw refusal(undefined);
      const startMcpServer = await loadMcp();
      const restoreConsole = consoleToStderr();
      try {
        await ctx.withApp(async (soniq) => {
          if (ctx.module && !redacting(soniq) && ctx.redact.kind !== "raw") throw refusal(ctx.module);
          io.err.write(`${redactionLine(ctx.redact, soniq, ctx.module !== undefined, "agents read")}\n`);
          const server = await startMcpServer(soniq, { allowWrites: o.allowWrites === true });
          const stop = () => void server.close();
          process.stdin.once("end", stop);
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
          try {
            await server.closed;
          } finally {
            process.stdin.off("end", stop);
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
          }
        });
      } finally {
        restoreConsole();
      }
    });
}
