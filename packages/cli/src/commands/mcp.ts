/**
 * `soniq mcp [--allow-writes]`: an MCP server on stdin/stdout for agents (Claude Desktop, IDE agents, ...).
 * One Soniq instance serves the session; it ends when the client closes stdin (or on SIGINT/SIGTERM), and
 * the instance is closed. stdout carries the protocol only: console output (the app module's included) goes
 * to stderr while it runs. The MCP SDK (and the zod and ajv it brings) is loaded only when this command runs:
 * imported up front it was about a fifth of every other command's start-up (`soniq --help`: 0.62 s).
 */
import type { Command } from "commander";
import { Context } from "../context.js";
import type { Io } from "../output.js";

const TOOLS_HELP = `
Read tools (always): stats, queues, jobs, job, explain, dead_letters, dead_letter, schedules,
schedule_history, flows, flow, audit. Write tools (only with --allow-writes): replay, replay_where, purge,
purge_where, cancel_job, cancel_flow, pause_queue, resume_queue. Without --allow-writes the write tools are
not listed and a call to one is refused. replay_where and purge_where are dry runs (a count) unless called with confirm: true.
Every write is audited with actor mcp:<client name>; the app's redact (--module) applies to every answer.

Client config (e.g. Claude Desktop's claude_desktop_config.json):
  { "mcpServers": { "soniq": { "command": "npx",
      "args": ["soniq", "mcp", "--database-url", "postgres://localhost/app"] } } }

Examples:
  soniq mcp --database-url postgres://localhost/app
  soniq mcp --module ./src/soniq.ts --allow-writes`;

/** Console output would corrupt the protocol on stdout: it goes to stderr for the session. */
function consoleToStderr(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => Object.assign(console, saved);
}

export function registerMcp(program: Command, io: Io): void {
  program
    .command("mcp")
    .description("serve the MCP tools for agents on stdio (read-only unless --allow-writes)")
    .option(
      "--allow-writes",
      "offer the write tools: replay, purge, cancel a job or flow, pause, resume (audited as mcp:<client>)",
    )
    .addHelpText("after", TOOLS_HELP)
    .action(async (o: { allowWrites?: boolean }, command: Command) => {
      const ctx = Context.of(command, io);
      const [{ StdioServerTransport }, { createMcpServer, refuseWrites }] = await Promise.all([
        import("@modelcontextprotocol/sdk/server/stdio.js"),
        import("../mcp/server.js"),
      ]);
      const restoreConsole = consoleToStderr();
      try {
        await ctx.withApp(async (soniq) => {
          const server = createMcpServer(soniq, { allowWrites: o.allowWrites === true });
          const transport = new StdioServerTransport();
          const closed = new Promise<void>((resolve) => {
            server.server.onclose = resolve;
          });
          const stop = () => void server.close();
          process.stdin.once("end", stop);
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
          try {
            await server.connect(transport);
            if (o.allowWrites !== true) refuseWrites(transport);
            await closed;
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
