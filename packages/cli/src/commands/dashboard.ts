/**
 * `soniq dashboard [--host] [--port]`: @soniq/dashboard's own `serveDashboard()` on the CLI's Soniq instance,
 * until SIGINT or SIGTERM. The package is loaded only here, from the application's project first, so the CLI
 * needs it for nothing else. Keys come from SONIQ_DASHBOARD_KEYS or --keys-file (../dashboard/keys.ts); off
 * loopback it refuses to start without one unless --insecure-open. The redaction rule in force (the module's
 * `redact`, --redact / SONIQ_REDACT paths, or none) is printed on stderr at start; off loopback without one
 * (and without --no-redact) a warning says how to set one.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Soniq } from "@soniq/core";
import type { Command } from "commander";
import { Context } from "../context.js";
import { assertSafeExposure, type DashboardKey, KEYS_ENV, loadKeys } from "../dashboard/keys.js";
import { CliError, usage } from "../errors.js";
import type { Io } from "../output.js";
import { dashboardRedactionWarning, redactionLine } from "../redaction.js";

type Serve = (options: {
  soniq: Soniq;
  host: string;
  port: number;
  apiKeys?: DashboardKey[];
  allowedHosts?: string[];
  publicOrigin?: string;
  trustProxy?: boolean;
}) => Promise<{ url: string; close(): Promise<void> }>;

interface DashboardFlags {
  host: string;
  port: number;
  keysFile?: string;
  allowedHost: string[];
  publicOrigin?: string;
  trustProxy?: boolean;
  insecureOpen?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

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
    .option("--keys-file <file>", `API keys, one label:scope:key per line (instead of ${KEYS_ENV})`)
    .option("--allowed-host <host>", "a host name clients use to reach it (repeatable)", collect, [])
    .option("--public-origin <origin>", "the https origin users reach it at behind a proxy")
    .option("--trust-proxy", "take the scheme and host from X-Forwarded-Proto / X-Forwarded-Host")
    .option("--insecure-open", "serve off loopback without any API key (everyone reads everything)")
    .addHelpText(
      "after",
      `\nKeys: ${KEYS_ENV}="ops:write:<key>,viewer:read:<key>" (keys of 16+ characters), or --keys-file with one\n` +
        "label:scope:key per line. Without keys the dashboard is read-only and open, so off loopback (--host\n" +
        "0.0.0.0) it refuses to start unless keys are set or --insecure-open is passed. Only the loopback names\n" +
        "and --allowed-host names are answered (DNS rebinding).\n\nRedaction: the rule in force (--module's redact, or\n" +
        "--redact / SONIQ_REDACT paths) is printed on stderr at start; off loopback without one it warns (--no-redact\n" +
        "says raw values are meant).\n\nExamples:\n  soniq dashboard\n" +
        `  ${KEYS_ENV}=ops:write:$OPS_KEY soniq dashboard --host 0.0.0.0 --allowed-host ops.internal\n` +
        "  soniq dashboard --port 8080 --database-url postgres://...",
    )
    .action(async (o: DashboardFlags, command: Command) => {
      const ctx = Context.of(command, io);
      const apiKeys = loadKeys(o.keysFile, io.env);
      assertSafeExposure(o.host, apiKeys, o.insecureOpen === true);
      const serve = await loadServe();
      await ctx.withApp(async (soniq) => {
        io.err.write(
          `${redactionLine(ctx.redact, soniq, ctx.module !== undefined, "the dashboard shows")}\n`,
        );
        const warning = dashboardRedactionWarning(o.host, ctx.redact, soniq);
        if (warning) io.err.write(`${warning}\n`);
        const server = await serve({
          soniq,
          host: o.host,
          port: o.port,
          ...(apiKeys.length > 0 ? { apiKeys } : {}),
          ...(o.allowedHost.length > 0 ? { allowedHosts: o.allowedHost } : {}),
          ...(o.publicOrigin !== undefined ? { publicOrigin: o.publicOrigin } : {}),
          ...(o.trustProxy ? { trustProxy: true } : {}),
        });
        const access = apiKeys.length > 0 ? `${apiKeys.length} API key(s)` : "read-only, no keys";
        ctx.printer.line(
          `soniq dashboard on ${server.url} (${ctx.resolveTarget().display}; ${access}); Ctrl-C stops it`,
        );
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await server.close();
      });
    });
}
