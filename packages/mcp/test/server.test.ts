/**
 * `startMcpServer` in process: the SDK's client over an in-memory transport pair, on a memory backend. The
 * tools' answers on PostgreSQL and SQLite, through the `soniq mcp` binary, are the CLI's tests (mcp.test.ts).
 */
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { memoryBackend } from "@soniq/backend-memory";
import { type Backend, type Job, PermanentError, Soniq, type SoniqOptions } from "@soniq/core";
import { afterEach, describe, expect, it } from "vitest";
import {
  MCP_VERSION,
  type RunningMcpServer,
  type StartMcpServerOptions,
  startMcpServer,
} from "../src/index.js";

const READS = 12;
const WRITES = 8;

interface Session {
  soniq: Soniq;
  client: Client;
  server: RunningMcpServer;
}

const open: Session[] = [];

async function session(
  options: StartMcpServerOptions = {},
  clientName = "test-agent",
  app: Partial<SoniqOptions> = {},
): Promise<Session> {
  const soniq = new Soniq({
    backend: memoryBackend() as Backend<unknown>,
    allowUnknownJobNames: true,
    ...app,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = await startMcpServer(soniq, { ...options, transport: serverSide });
  const client = new Client({ name: clientName, version: "1.0.0" });
  await client.connect(clientSide);
  const s = { soniq, client, server };
  open.push(s);
  return s;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { text?: string }[]).map((c) => c.text ?? "").join("");
  return { isError: result.isError === true, text };
}

afterEach(async () => {
  for (const s of open.splice(0)) {
    await s.client.close();
    await s.server.close();
    await s.soniq.close();
  }
});

describe("startMcpServer", () => {
  it("mcp/start-read-only: the read tools only; a write is refused and changes nothing", async () => {
    const { client, soniq } = await session();
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(READS);
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(client.getInstructions()).toContain("read-only");
    const refused = await call(client, "pause_queue", { queue: "default" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("--allow-writes");
    expect((await soniq.queues.get("default")).paused).toBe(false);
  });

  it("mcp/start-allow-writes: the write tools too, each write audited as mcp:<client name>", async () => {
    const { client, soniq } = await session({ allowWrites: true }, "claude-desktop");
    expect((await client.listTools()).tools).toHaveLength(READS + WRITES);
    const { id } = await soniq.jobs.enqueue("demo.ok", { n: 1 });
    const cancelled = await call(client, "cancel_job", { id });
    expect(cancelled.isError, cancelled.text).toBe(false);
    expect(JSON.parse(cancelled.text)).toEqual({ id, cancelled: true });
    expect((await soniq.jobs.get(id))?.status).toBe("cancelled");
    const [row] = await soniq.audit.list({ action: "job.cancel", limit: 1 });
    expect(row).toMatchObject({ actor: "mcp:claude-desktop", outcome: "ok" });
  });

  it("mcp/start-reads: jobs and job answer the app's rows; a miss is a tool error", async () => {
    const { client, soniq } = await session();
    const { id } = await soniq.jobs.enqueue("demo.ok", { n: 1 }, { queue: "emails" });
    const jobs = JSON.parse((await call(client, "jobs", { queue: "emails" })).text) as Job[];
    expect(jobs.map((j) => j.id)).toEqual([id]);
    expect(JSON.parse((await call(client, "job", { id })).text)).toMatchObject({ id, args: { n: 1 } });
    const missing = await call(client, "job", { id: "no-such-id" });
    expect(missing).toMatchObject({ isError: true, text: expect.stringContaining("no-such-id") });
  });

  it("mcp/start-close: close() ends the session once and leaves the Soniq instance open", async () => {
    const { client, server, soniq } = await session();
    expect(client.getServerVersion()).toEqual({ name: "soniq", version: MCP_VERSION });
    await Promise.all([server.close(), server.close()]);
    await server.closed;
    expect(await soniq.jobs.list()).toEqual([]);
  });

  it("mcp/version: MCP_VERSION is the package's version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(MCP_VERSION).toBe(pkg.version);
  });
});

describe("redaction", () => {
  /** A dead letter whose last error quotes a password `redact` hides, and a flow step it holds. */
  async function leaky(redacting: boolean) {
    const s = await session({ allowWrites: true }, "test-agent", redacting ? { redact: ["password"] } : {});
    s.soniq.job("auth.login", async (args: { password: string }) => {
      throw new PermanentError(`password ${args.password}`);
    });
    s.soniq.job("auth.after", async () => 1);
    const flow = await s.soniq.flows.start({
      steps: {
        a: { job: "auth.login", args: { password: "hunter2-secret" } },
        b: { job: "auth.after", dependsOn: ["a"] },
      },
    });
    await s.soniq.worker().runOnce();
    return { ...s, dead: flow.jobs.a as string, held: flow.jobs.b as string };
  }

  it("mcp/redact-search-oracle: while redacting, q matches an id or a job name, never the last error", async () => {
    for (const redacting of [false, true]) {
      const { client, dead } = await leaky(redacting);
      const hits = redacting ? 0 : 1;
      const rows = async (tool: string, args: Record<string, unknown>) =>
        (JSON.parse((await call(client, tool, args)).text) as unknown[]).length;
      expect(await rows("dead_letters", { q: "password hunter2-s" }), `${redacting}`).toBe(hits);
      const count = async (tool: string, q: string) =>
        (JSON.parse((await call(client, tool, { q })).text) as { count: number }).count;
      expect(await count("purge_where", "hunter2-s")).toBe(hits);
      expect(await count("replay_where", "hunter2-s")).toBe(hits);
      expect(await rows("dead_letters", { q: dead })).toBe(1);
      expect(await rows("dead_letters", { q: "auth.login" })).toBe(1);
      expect(await count("purge_where", dead)).toBe(1);
    }
  });

  it("mcp/redact-jobs-search: the jobs tool searches the same way", async () => {
    const { client, soniq } = await session({}, "test-agent", { redact: ["password"] });
    soniq.job(
      "auth.retry",
      async (args: { password: string }) => {
        throw new Error(`password ${args.password}`);
      },
      { retry: { delaysMs: [3_600_000] } },
    );
    const { id } = await soniq.jobs.enqueue("auth.retry", { password: "hunter2-secret" });
    await soniq.worker().runOnce();
    expect((await soniq.jobs.list({ q: "hunter2-s" })).map((j) => j.id)).toEqual([id]);
    const rows = async (q: string) =>
      (JSON.parse((await call(client, "jobs", { q })).text) as unknown[]).length;
    expect(await rows("hunter2-s")).toBe(0);
    expect(await rows(id)).toBe(1);
    expect(await rows("auth.retry")).toBe(1);
  });

  it("mcp/redact-held-step-explain: a step held by a dead-lettered parent quotes no secret of it", async () => {
    const { client, held, dead } = await leaky(true);
    const shown = await call(client, "explain", { id: held });
    expect(shown.text).toContain("held_by_dead_letter");
    expect(shown.text).not.toContain("hunter2");
    expect(shown.text).toContain("password [redacted]");
    expect((await call(client, "explain", { id: dead })).text).not.toContain("hunter2");
  });
});

describe("bulk guard", () => {
  it("mcp/bulk-everything-needs-all: a confirmed replay_where or purge_where that narrows nothing needs all: true", async () => {
    const { client, soniq } = await session({ allowWrites: true });
    soniq.job("imports.row", async () => {
      throw new PermanentError("bad row");
    });
    for (let i = 0; i < 3; i++) await soniq.jobs.enqueue("imports.row", { i });
    await soniq.worker().runOnce();
    for (const args of [{}, { since: "1970-01-01T00:00:00Z" }, { name: "imports.row" }]) {
      for (const tool of ["replay_where", "purge_where"]) {
        const refused = await call(client, tool, { ...args, confirm: true });
        expect(refused.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
        expect(refused.text).toContain("all: true");
      }
    }
    expect((await soniq.jobs.stats()).dead_letter).toBe(3);
    // A dry run is answered; with all: true the confirmed call acts.
    expect(JSON.parse((await call(client, "purge_where", { name: "imports.row" })).text).count).toBe(3);
    const done = await call(client, "purge_where", { name: "imports.row", confirm: true, all: true });
    expect(JSON.parse(done.text)).toMatchObject({ count: 3, dryRun: false });
    expect((await soniq.jobs.stats()).dead_letter).toBe(0);
  });

  it("mcp/untrusted-output: the server tells agents that answers are data, not instructions", async () => {
    const { client } = await session();
    expect(client.getInstructions()).toMatch(/data, not instructions/);
  });
});
