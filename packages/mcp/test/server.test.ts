/**
 * `startMcpServer` in process: the SDK's client over an in-memory transport pair, on a memory backend. The
 * tools' answers on PostgreSQL and SQLite, through the `soniq mcp` binary, are the CLI's tests (mcp.test.ts).
 */
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { memoryBackend } from "@soniq/backend-memory";
import {
  type AuditEntry,
  type Backend,
  type Job,
  type JobStep,
  PermanentError,
  Soniq,
  type SoniqOptions,
} from "@soniq/core";
import { afterEach, describe, expect, it } from "vitest";
import {
  MCP_VERSION,
  type RunningMcpServer,
  type StartMcpServerOptions,
  startMcpServer,
} from "../src/index.js";

const READS = 12;
const WRITES = 9;

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

  it("mcp/args-version: job and dead_letter answer argsVersion, a number or null (unversioned)", async () => {
    const { client, soniq } = await session();
    const versioned = await soniq.jobs.enqueue("demo.ok", { to: "ann" }, { version: 3 });
    const plain = await soniq.jobs.enqueue("demo.ok", { to: "bob" });
    const job = async (id: string) => JSON.parse((await call(client, "job", { id })).text) as Job;
    expect(await job(versioned.id)).toMatchObject({ id: versioned.id, argsVersion: 3 });
    expect(await job(plain.id)).toMatchObject({ id: plain.id, argsVersion: null });
    soniq.job(
      "demo.versioned",
      async () => {
        throw new PermanentError("refused");
      },
      { queue: "versioned", version: 2 },
    );
    const dead = await soniq.jobs.enqueue("demo.versioned", {});
    await soniq.worker({ queues: ["versioned"] }).runOnce();
    const row = await call(client, "dead_letter", { id: dead.id });
    expect(row.isError, row.text).toBe(false);
    expect(JSON.parse(row.text)).toMatchObject({ id: dead.id, argsVersion: 2 });
    const description = (await client.listTools()).tools.find((t) => t.name === "job")?.description;
    expect(description).toContain("argsVersion");
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

describe("validator messages", () => {
  it("mcp/redact-validator-message: a replay refused by a schema whose message quotes the value answers the path, not the value", async () => {
    for (const redacting of [false, true]) {
      const { client, soniq } = await session(
        { allowWrites: true },
        "test-agent",
        redacting ? { redact: ["email"] } : {},
      );
      // A schema that starts refusing args it took before, in words that quote the value.
      let refuse = false;
      const schema = {
        "~standard": {
          version: 1 as const,
          vendor: "test",
          validate: (value: unknown) => {
            const email = (value as { email: string }).email;
            return refuse
              ? { issues: [{ message: `"${email}" is not allowed`, path: ["email"] }] }
              : { value };
          },
        },
      };
      soniq.job(
        "users.invite",
        async () => {
          throw new PermanentError("no");
        },
        { schema },
      );
      const { id } = await soniq.jobs.enqueue("users.invite", { email: "ann@example.com" });
      await soniq.worker().runOnce();
      refuse = true;
      const answer = await call(client, "replay", { id, force: true });
      expect(answer.isError).toBe(true);
      expect(answer.text).toContain("email");
      if (redacting) expect(answer.text).not.toContain("ann@example.com");
      else expect(answer.text).toContain("ann@example.com");
    }
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

describe("durable steps", () => {
  const SECRET = /tok_live_secret|hunter2/;

  /** An app redacting `**.token` with a job that checkpoints a token and waits for "approval", and one whose charge fails quoting it. */
  async function stepSession(options: StartMcpServerOptions = {}) {
    const s = await session(options, "claude-desktop", { redact: ["**.token"] });
    s.soniq.job("steps.onboard", async (_args: { user: string }, ctx) => {
      const created = await ctx.step("create_account", async () => ({
        account: "acc_1",
        session: { token: "tok_live_secret" },
      }));
      const approval = await ctx.waitForSignal<{ by: string }>("approval", { timeoutMs: 3_600_000 });
      return { account: created.account, approvedBy: approval?.by ?? null };
    });
    s.soniq.job("steps.charge", async (_args: { order: number }, ctx) => {
      const reserved = await ctx.step("reserve", async () => ({ token: "tok_live_secret" }));
      const payment = await ctx.step("charge_card", async (): Promise<{ paymentId: string }> => {
        throw new PermanentError(`card declined for ${reserved.token}`);
      });
      return { paid: payment.paymentId };
    });
    return s;
  }

  it("mcp/job-steps: job answers the steps, values and payloads redacted like results", async () => {
    const { client, soniq } = await stepSession({ allowWrites: true });
    const { id } = await soniq.jobs.enqueue("steps.onboard", { user: "ann" });
    await soniq.worker().runOnce();
    const waiting = await call(client, "job", { id });
    expect(waiting.isError, waiting.text).toBe(false);
    expect(waiting.text).not.toMatch(SECRET);
    const job = JSON.parse(waiting.text) as Job & { steps: JobStep[] };
    expect(job).toMatchObject({ id, status: "queued" });
    expect(job.steps).toEqual([
      expect.objectContaining({
        name: "create_account",
        kind: "step",
        state: "done",
        attempt: 1,
        value: { account: "acc_1", session: { token: "[redacted]" } },
      }),
      expect.objectContaining({ name: "approval", kind: "signal", state: "waiting", value: null }),
    ]);
    // A signal's payload, once the job took it, is a step value: redacted too.
    await soniq.jobs.signal(id, "approval", { by: "ops@example.com", token: "tok_live_secret" });
    await soniq.worker().runOnce();
    const done = await call(client, "job", { id });
    expect(done.text).not.toMatch(SECRET);
    expect((JSON.parse(done.text) as { steps: JobStep[] }).steps[1]).toMatchObject({
      name: "approval",
      state: "done",
      value: { by: "ops@example.com", token: "[redacted]" },
    });
    // The store keeps the real values.
    expect((await soniq.jobs.steps(id))[0]?.value).toMatchObject({ session: { token: "tok_live_secret" } });
    // A job without steps answers steps: [].
    const plain = await soniq.jobs.enqueue("demo.ok", {});
    expect(JSON.parse((await call(client, "job", { id: plain.id })).text)).toMatchObject({ steps: [] });
  });

  it("mcp/signal: stores and wakes, a resend with the key is a duplicate, audited as mcp:<client>; a done job is refused", async () => {
    const { client, soniq } = await stepSession({ allowWrites: true });
    const { id } = await soniq.jobs.enqueue("steps.onboard", { user: "bob" });
    await soniq.worker().runOnce();
    const sent = await call(client, "signal", {
      id,
      name: "approval",
      payload: { by: "ops@example.com" },
      key: "ticket-4711",
    });
    expect(sent.isError, sent.text).toBe(false);
    expect(JSON.parse(sent.text)).toEqual({
      id,
      name: "approval",
      status: "stored",
      woke: true,
      deadLetter: false,
    });
    const again = await call(client, "signal", {
      id,
      name: "approval",
      payload: { by: "x" },
      key: "ticket-4711",
    });
    expect(JSON.parse(again.text)).toMatchObject({ status: "duplicate", woke: false });
    const audit = await soniq.audit.list({ action: "job.signal" });
    expect(audit.map((a: AuditEntry) => [a.actor, a.target, a.outcome])).toEqual([
      ["mcp:claude-desktop", id, "duplicate"],
      ["mcp:claude-desktop", id, "ok"],
    ]);
    await soniq.worker().runOnce();
    expect((await soniq.jobs.get(id))?.result).toEqual({ account: "acc_1", approvedBy: "ops@example.com" });

    const finished = await call(client, "signal", { id, name: "approval" });
    expect(finished.isError).toBe(true);
    expect(finished.text).toContain("takes no signals. Nothing was stored.");
    const missing = await call(client, "signal", {
      id: "00000000-0000-4000-8000-000000000000",
      name: "approval",
    });
    expect(missing).toMatchObject({ isError: true, text: expect.stringContaining("no job or dead letter") });
    const badName = await call(client, "signal", { id, name: "Not A Name" });
    expect(badName.isError).toBe(true);
    expect(badName.text).toMatch(/name must match/);
    const unknownKey = await call(client, "signal", { id, name: "approval", actor: "someone" });
    expect(unknownKey.isError).toBe(true);
    expect(unknownKey.text).toContain("actor");
    const { tools } = await client.listTools();
    const signal = tools.find((t) => t.name === "signal");
    expect(signal?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(signal?.description).toMatch(/untrusted data/);
    expect(Object.keys(signal?.inputSchema.properties ?? {}).sort()).toEqual([
      "id",
      "key",
      "name",
      "payload",
    ]);
  });

  it("mcp/signal-read-only: without allowWrites the signal tool is not listed and a call is refused, nothing stored", async () => {
    const { client, soniq } = await stepSession();
    const { id } = await soniq.jobs.enqueue("steps.onboard", { user: "cat" });
    await soniq.worker().runOnce();
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("signal");
    const refused = await call(client, "signal", { id, name: "approval", payload: { by: "agent" } });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("read-only");
    expect(refused.text).toContain("--allow-writes");
    expect(await soniq.audit.list({ action: "job.signal" })).toEqual([]);
    await soniq.worker().runOnce();
    expect((await soniq.jobs.steps(id)).map((step) => [step.name, step.state])).toEqual([
      ["create_account", "done"],
      ["approval", "waiting"],
    ]);
  });

  it("mcp/replay-steps: dead_letter answers the steps (errors scrubbed); replay with resolve resumes; replay_where discards", async () => {
    const { client, soniq } = await stepSession({ allowWrites: true });
    const first = await soniq.jobs.enqueue("steps.charge", { order: 1 });
    const second = await soniq.jobs.enqueue("steps.charge", { order: 2 });
    await soniq.worker().runOnce();
    const dead = await call(client, "dead_letter", { id: first.id });
    expect(dead.isError, dead.text).toBe(false);
    expect(dead.text).not.toMatch(SECRET);
    const row = JSON.parse(dead.text) as { lastError: string; steps: JobStep[] };
    expect(row.steps).toEqual([
      expect.objectContaining({ name: "reserve", state: "done", value: { token: "[redacted]" } }),
      expect.objectContaining({
        name: "charge_card",
        state: "failed",
        error: expect.stringContaining("card declined for [redacted]"),
      }),
    ]);
    expect(row.lastError).toContain("card declined for [redacted]");

    const badName = await call(client, "replay", { id: first.id, resolve: { "not a name": 1 } });
    expect(badName.isError).toBe(true);
    expect(badName.text).toContain("not a step name");
    const badMode = await call(client, "replay", { id: first.id, steps: "maybe" });
    expect(badMode.isError).toBe(true);
    expect(badMode.text).toMatch(/steps/);

    const replayed = await call(client, "replay", {
      id: first.id,
      resolve: { charge_card: { paymentId: "manual-1", token: "tok_live_secret" } },
    });
    expect(replayed.isError, replayed.text).toBe(false);
    const { newId } = JSON.parse(replayed.text) as { newId: string };
    expect(await soniq.jobs.steps(newId)).toEqual([
      expect.objectContaining({ name: "reserve", state: "done", attempt: 1 }),
      expect.objectContaining({ name: "charge_card", state: "done", attempt: 0 }),
    ]);
    // The audit row holds the resolved values through redact.
    const audit = await call(client, "audit", { action: "dead_letter.replay" });
    expect(audit.text).not.toMatch(SECRET);
    expect(JSON.parse(audit.text)[0]).toMatchObject({
      actor: "mcp:claude-desktop",
      target: first.id,
      params: { resolve: { charge_card: { paymentId: "manual-1", token: "[redacted]" } } },
    });
    await soniq.worker().runOnce();
    expect(await soniq.jobs.get(newId)).toMatchObject({ status: "done", result: { paid: "manual-1" } });

    const dry = await call(client, "replay_where", { ids: [second.id], steps: "discard" });
    expect(JSON.parse(dry.text)).toMatchObject({ count: 1, dryRun: true });
    const discarded = await call(client, "replay_where", {
      ids: [second.id],
      steps: "discard",
      confirm: true,
    });
    expect(JSON.parse(discarded.text)).toEqual({ count: 1, dryRun: false });
    const [fresh] = await soniq.jobs.list({ jobName: "steps.charge", status: "queued" });
    expect(fresh).toBeDefined();
    expect(await soniq.jobs.steps(fresh?.id as string)).toEqual([]);
  });
});
