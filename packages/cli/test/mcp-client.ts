/**
 * Drives `soniq mcp` as an agent would: the SDK's client over stdio, spawning the built binary. Every client
 * a test opens is closed by `closeClients()` (the leak check: its process has exited).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BIN, baseEnv } from "./cli.js";

export interface Called {
  isError: boolean;
  text: string;
  /** The answer parsed as JSON (tool errors are plain text: use `text`). */
  json<T = unknown>(): T;
}

export interface Agent {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<Called>;
  stderr(): string;
}

const open = new Set<{ client: Client; transport: StdioClientTransport }>();

export async function connectAgent(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; clientName?: string },
): Promise<Agent> {
  const env = Object.fromEntries(
    Object.entries(baseEnv(options.env ?? {})).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", ...args],
    cwd: options.cwd,
    env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: options.clientName ?? "test-agent", version: "1.0.0" });
  open.add({ client, transport });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    async call(name, callArgs = {}) {
      const result = await client.callTool({ name, arguments: callArgs });
      const content = result.content as { type: string; text?: string }[];
      const text = content.map((c) => c.text ?? "").join("");
      return {
        isError: result.isError === true,
        text,
        json<T>() {
          if (result.isError) throw new Error(`${name} answered a tool error: ${text}`);
          return JSON.parse(text) as T;
        },
      };
    },
  };
}

/** Closes every client (the client ends stdin; the server exits) and checks each process is gone. */
export async function closeClients(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.all(all.map(({ client }) => client.close()));
  const alive = all.filter(({ transport }) => {
    const pid = transport.pid;
    if (pid === null) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  if (alive.length > 0) throw new Error(`${alive.length} soniq mcp process(es) outlived their client`);
}
