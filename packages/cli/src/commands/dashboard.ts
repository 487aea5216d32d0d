/**
 * `soniq dashboard [--host] [--port]`: serves @soniq/dashboard's fetch handler on node:http until SIGINT or
 * SIGTERM. The package is loaded only here, so the CLI does not need it for anything else.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError } from "../errors.js";
import type { App } from "../features.js";
import type { Io } from "../output.js";
import { positiveInt } from "../parse.js";

type FetchHandler = (request: Request) => Response | Promise<Response>;
type DashboardFactory = (options: { soniq: App }) => FetchHandler | { fetch: FetchHandler };

const PACKAGE = "@soniq/dashboard";

/** The package as the application sees it (its own node_modules first), else beside the CLI. */
function locate(): string {
  try {
    return pathToFileURL(createRequire(join(process.cwd(), "package.json")).resolve(PACKAGE)).href;
  } catch {
    return PACKAGE;
  }
}

async function loadDashboard(): Promise<DashboardFactory> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(locate())) as Record<string, unknown>;
  } catch (err) {
    throw new CliError(
      "SONIQ_CLI_MISSING_PACKAGE",
      `soniq dashboard needs ${PACKAGE}. Install it (npm install ${PACKAGE}).`,
      {
        cause: err,
      },
    );
  }
  if (typeof mod.dashboard !== "function") {
    throw new CliError(
      "SONIQ_CLI_UNSUPPORTED",
      `this ${PACKAGE} exports no dashboard() yet. Upgrade ${PACKAGE}.`,
    );
  }
  return mod.dashboard as DashboardFactory;
}

function toRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
    duplex: "half",
  } as RequestInit);
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}

export function registerDashboard(program: Command, io: Io): void {
  program
    .command("dashboard")
    .description("serve the web dashboard (needs @soniq/dashboard) until Ctrl-C")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--port <port>", "port", positiveInt("--port"), 6161)
    .addHelpText(
      "after",
      "\nExamples:\n  soniq dashboard\n  soniq dashboard --port 8080 --database-url postgres://...",
    )
    .action(async (o: { host: string; port: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const factory = await loadDashboard();
      await ctx.withApp(async (soniq) => {
        const made = factory({ soniq });
        const handler = typeof made === "function" ? made : made.fetch.bind(made);
        const origin = `http://${o.host}:${o.port}`;
        const server = createServer((req, res) => {
          Promise.resolve()
            .then(() => handler(toRequest(req, origin)))
            .then((response) => send(res, response))
            .catch(() => {
              if (!res.headersSent) res.writeHead(500);
              res.end();
            });
        });
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen(o.port, o.host, resolve);
        });
        ctx.printer.line(`soniq dashboard on ${origin} (${ctx.resolveTarget().display}); Ctrl-C stops it`);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
    });
}
