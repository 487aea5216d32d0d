/**
 * `soniq dashboard [--host] [--port]`: @soniq/dashboard's own `serveDashboard()` on the CLI's Soniq instance,
 * until SIGINT or SIGTERM. The package is loaded only here, from the application's project first, so the CLI
 * needs it for nothing else.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Soniq } from "@soniq/core";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError, usage } from "../errors.js";
import type { Io } from "../output.js";

type Serve = (options: {
  soniq: Soniq;
  host: string;
  port: number;
}) => Promise<{ url: string; close(): Promise<void> }>;

const PACKAGE = "@soniq/dashboard";

/** The package as the application sees it (its own node_modules first), else beside the CLI. */
function locate(): string {
  try {
    return pathToFileURL(createRequire(join(process.cwd(), "package.json")).resolve(PACKAGE)).href;
  } catch {
    return PACKAGE;
  }
}

async function loadServe(): Promise<Serve> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(locate())) as Record<string, unknown>;
  } catch (err) {
    throw new CliError(
      "SONIQ_CLI_MISSING_PACKAGE",
      `soniq dashboard needs ${PACKAGE}. Install it in your project (npm install ${PACKAGE}).`,
      { cause: err },
    );
  }
  if (typeof mod.serveDashboard !== "function") {
    throw new CliError(
      "SONIQ_CLI_UNSUPPORTED",
      `this ${PACKAGE} exports no serveDashboard(). Upgrade ${PACKAGE}.`,
    );
  }
  return mod.serveDashboard as Serve;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw usage(`--port takes 0 to 65535 (got "${value}").`);
  return n;
}

export function registerDashboard(program: Command, io: Io): void {
  program
    .command("dashboard")
    .description("serve the web dashboard (needs @soniq/dashboard) until Ctrl-C")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--port <port>", "port (0 picks a free one)", port, 6161)
    .addHelpText(
      "after",
      "\nRead-only: the CLI configures no API keys.\n\nExamples:\n  soniq dashboard\n  soniq dashboard --port 8080 --database-url postgres://...",
    )
    .action(async (o: { host: string; port: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const serve = await loadServe();
      await ctx.withApp(async (soniq) => {
        const server = await serve({ soniq, host: o.host, port: o.port });
        ctx.printer.line(
          `soniq dashboard on ${server.url} (${ctx.resolveTarget().display}); Ctrl-C stops it`,
        );
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await server.close();
      });
    });
}
