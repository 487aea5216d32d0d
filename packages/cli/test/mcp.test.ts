/** `soniq mcp` driven through the MCP SDK's client over stdio: tool lists, reads, refused and audited writes. */

import { join } from "node:path";
import type {
  AuditEntry,
  DeadLetterJob,
  Explanation,
  Flow,
  FlowSummary,
  Job,
  JobStep,
  QueueInfo,
} from "@soniq/core";
import { afterAll, describe, expect, it } from "vitest";
import { loadMcp } from "../src/commands/mcp.js";
import { CliError, describeError } from "../src/errors.js";
import { BIN, soniqCli, sqliteDb } from "./cli.js";
import { type Agent, closeClients, connectAgent } from "./mcp-client.js";
import { BACKENDS, STAT_KEYS, useSeededDatabase } from "./seed.js";
import { runSteps, stepApp } from "./step-jobs.js";

const READS = [
  "stats",
  "queues",
  "jobs",
  "job",
  "explain",
  "dead_letters",
  "dead_letter",
  "schedules",
  "schedule_history",
  "flows",
  "flow",
  "audit",
];
const WRITES = [
  "replay",
  "replay_where",
  "purge",
  "purge_where",
  "cancel_job",
  "cancel_flow",
  "signal",
  "pause_queue",
  "resume_queue",
];

describe.each(BACKENDS)("soniq mcp on %s", (_kind, makeDb) => {
  const s = useSeededDatabase(makeDb);
  // Raw values on purpose: these tests read the seeded args back (redaction has its own tests in mcp-redact).
  const agent = (...flags: string[]): Promise<Agent> =>
    connectAgent([...flags, "--no-redact", "--database-url", s.db.url], { cwd: s.db.dir });

  afterAll(closeClients);

  it("mcp/tools-read-only: the read tools only, each with a strict object input", async () => {
    const { client } = await agent();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...READS].sort());
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.annotations?.readOnlyHint).toBe(true);
      expect(t.description).toBeTruthy();
    }
    expect(client.getInstructions()).toContain("--allow-writes");
  });

  it("mcp/tools-allow-writes: --allow-writes adds the write tools", async () => {
    const { client } = await agent("--allow-writes");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...READS, ...WRITES].sort());
    const purge = tools.find((t) => t.name === "purge_where");
    expect(purge?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(Object.keys(purge?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["queue", "name", "reason", "since", "until", "confirm"]),
    );
  });

  it("mcp/reads: stats, queues, jobs, job, explain, dead letters, schedules, audit", async () => {
    const a = await agent();
    const stats = (await a.call("stats")).json<Record<string, number>>();
    expect(Object.keys(stats).sort()).toEqual(STAT_KEYS);
    expect(stats.dead_letter).toBeGreaterThanOrEqual(4);
    const queues = (await a.call("queues")).json<QueueInfo[]>();
    expect(queues.map((q) => q.name)).toEqual(expect.arrayContaining(["default", "emails", "failing"]));
    const queued = (await a.call("jobs", { status: "queued", name: "test.ok" })).json<Job[]>();
    expect(queued.map((j) => (j.args as { n: number }).n).sort()).toEqual([1, 2, 3]);
    const emails = (await a.call("jobs", { queue: "emails", limit: 1 })).json<Job[]>();
    expect(emails).toHaveLength(1);
    const one = (await a.call("job", { id: emails[0]?.id })).json<Job>();
    expect(one).toMatchObject({ id: emails[0]?.id, jobName: "test.ok", args: { n: 3 }, status: "queued" });
    const dead = (await a.call("dead_letters", { name: "test.orphan" })).json<DeadLetterJob[]>();
    expect(dead).toHaveLength(1);
    const row = (await a.call("dead_letter", { id: dead[0]?.id })).json<DeadLetterJob>();
    expect(row).toMatchObject({ jobName: "test.orphan", queue: "orphans" });
    const why = (await a.call("explain", { id: row.id })).json<Explanation>();
    expect(why).toMatchObject({ status: "dead_letter", verdict: "dead_lettered" });
    expect((await a.call("explain", { id: "no-such-id" })).json<Explanation>().verdict).toBe("not_found");
    expect((await a.call("dead_letters", { since: "1h", queue: "failing" })).json<unknown[]>()).toHaveLength(
      3,
    );
    expect((await a.call("schedules")).json()).toEqual([]);
    expect((await a.call("audit", { limit: 5 })).json()).toBeInstanceOf(Array);
    const missing = await a.call("job", { id: "no-such-id" });
    expect(missing).toMatchObject({ isError: true });
    expect(missing.text).toContain("no job with id no-such-id");
    const noSchedule = await a.call("schedule_history", { name: "nightly" });
    expect(noSchedule.isError).toBe(true);
  });

  it("mcp/bad-input: a tool error naming the field, nothing read or changed", async () => {
    const a = await agent("--allow-writes");
    const tooMany = await a.call("jobs", { limit: 5000 });
    expect(tooMany.isError).toBe(true);
    expect(tooMany.text).toMatch(/limit/);
    const unknownKey = await a.call("dead_letters", { queue: "failing", colour: "red" });
    expect(unknownKey.isError).toBe(true);
    expect(unknownKey.text).toContain("colour");
    const badDate = await a.call("purge_where", { since: "last tuesday", confirm: true });
    expect(badDate.isError).toBe(true);
    expect(badDate.text).toMatch(/since/);
    const badStatus = await a.call("jobs", { status: ["queued", "sleeping"] });
    expect(badStatus.isError).toBe(true);
    expect(badStatus.text).toMatch(/status/);
    expect(await s.app.deadLetters.list()).toHaveLength(4);
  });

  it("mcp/write-refused-read-only: without --allow-writes a write is refused, not run or audited", async () => {
    const a = await agent();
    const [row] = await s.app.deadLetters.list({ jobName: "test.fail", limit: 1 });
    const before = await s.app.audit.list({ limit: 1000 });
    for (const [name, args] of [
      ["replay", { id: row?.id }],
      ["purge_where", { confirm: true }],
      ["pause_queue", { queue: "default" }],
    ] as const) {
      const r = await a.call(name, args);
      expect(r.isError).toBe(true);
      expect(r.text).toContain("read-only");
      expect(r.text).toContain("--allow-writes");
    }
    expect(await s.app.deadLetters.get(row?.id as string)).not.toBeNull();
    expect((await s.app.queues.get("default")).paused).toBe(false);
    expect(await s.app.audit.list({ limit: 1000 })).toHaveLength(before.length);
  });

  it("mcp/bulk-dry-run: replay_where and purge_where count and change nothing without confirm", async () => {
    const a = await agent("--allow-writes");
    const replay = (await a.call("replay_where", { name: "test.fail" })).json<{
      count: number;
      dryRun: boolean;
      message: string;
    }>();
    expect(replay).toMatchObject({ count: 3, dryRun: true });
    expect(replay.message).toContain("confirm: true");
    expect((await a.call("purge_where", {})).json()).toMatchObject({ count: 4, dryRun: true });
    expect(await s.app.deadLetters.list()).toHaveLength(4);
  });

  it("mcp/filters-q-ids: core's text search and id set, on the reads and the bulk writes' filter", async () => {
    const a = await agent("--allow-writes");
    const ok = (await a.call("jobs", { q: "TEST.OK" })).json<Job[]>();
    expect(ok.map((j) => j.jobName)).toEqual(["test.ok", "test.ok", "test.ok"]);
    const orphan = (await a.call("dead_letters", { q: "orphan" })).json<DeadLetterJob[]>();
    expect(orphan.map((d) => d.jobName)).toEqual(["test.orphan"]);
    const fails = await s.app.deadLetters.list({ jobName: "test.fail" });
    const picked = [fails[0]?.id, orphan[0]?.id];
    const byIds = (await a.call("dead_letters", { ids: picked })).json<DeadLetterJob[]>();
    expect(byIds.map((d) => d.id).sort()).toEqual([...picked].sort());
    expect((await a.call("jobs", { ids: [ok[0]?.id] })).json<Job[]>().map((j) => j.id)).toEqual([ok[0]?.id]);
    expect((await a.call("purge_where", { ids: picked })).json()).toMatchObject({ count: 2, dryRun: true });
    const notIds = await a.call("dead_letters", { ids: ["nope"] });
    expect(notIds.isError).toBe(true);
    expect(notIds.text).toMatch(/ids/);
    expect(await s.app.deadLetters.list()).toHaveLength(4);
  });

  it("mcp/replay-audited: a confirmed replay_where and a forced replay, each audited as mcp:<client>", async () => {
    const a = await connectAgent(["--allow-writes", "--no-redact", "--database-url", s.db.url], {
      cwd: s.db.dir,
      clientName: "claude-desktop",
    });
    const done = (await a.call("replay_where", { name: "test.fail", confirm: true })).json();
    expect(done).toEqual({ count: 3, dryRun: false });
    // A replayed dead letter stays listed, with its replay counted.
    const replayed = await s.app.deadLetters.list({ jobName: "test.fail" });
    expect(replayed.map((r) => r.resurrectionCount)).toEqual([1, 1, 1]);
    expect(await s.app.jobs.list({ jobName: "test.fail", status: "queued" })).toHaveLength(3);
    const [bulkRow] = await s.app.audit.list({ action: "dead_letter.replay_where", limit: 1 });
    expect(bulkRow).toMatchObject({ actor: "mcp:claude-desktop", outcome: "ok" });
    expect(JSON.stringify(bulkRow?.details)).toContain("3");

    // test.orphan has no handler in any worker: refused unless force.
    const [orphan] = await s.app.deadLetters.list({ jobName: "test.orphan" });
    const refused = await a.call("replay", { id: orphan?.id });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("force: true");
    expect(await s.app.deadLetters.get(orphan?.id as string)).not.toBeNull();
    const forced = (await a.call("replay", { id: orphan?.id, force: true })).json<{
      id: string;
      newId: string;
    }>();
    expect((await s.app.jobs.get(forced.newId))?.jobName).toBe("test.orphan");
    const audit = (await a.call("audit", { action: "dead_letter.replay" })).json<AuditEntry[]>();
    expect(audit[0]).toMatchObject({ actor: "mcp:claude-desktop", target: orphan?.id, outcome: "ok" });
  });

  it("mcp/controls-audited: pause, resume, cancel and purge act and are audited", async () => {
    const a = await agent("--allow-writes");
    expect((await a.call("pause_queue", { queue: "emails" })).json()).toMatchObject({ paused: true });
    expect((await s.app.queues.get("emails")).paused).toBe(true);
    expect((await a.call("resume_queue", { queue: "emails" })).json()).toMatchObject({ paused: false });
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 9 }, { queue: "emails" });
    expect((await a.call("cancel_job", { id })).json()).toEqual({ id, cancelled: true });
    expect((await s.app.jobs.get(id))?.status).toBe("cancelled");
    const again = await a.call("cancel_job", { id });
    expect(again.isError).toBe(true);
    expect(again.text).toContain("Nothing was changed");
    const actions = (await s.app.audit.list({ limit: 10 })).filter((e) => e.actor === "mcp:test-agent");
    expect(actions.map((e) => e.action)).toEqual(
      expect.arrayContaining(["queue.pause", "queue.resume", "job.cancel"]),
    );
    const purged = await a.call("purge", { id: "no-such-dead-letter" });
    expect(purged.isError).toBe(true);
  });

  it("mcp/flows: flows and flow read a workflow; cancel_flow cancels it, audited", async () => {
    const started = await s.app.flows.start({
      name: "mcp.check",
      steps: {
        first: { job: "test.ok", args: { n: 10 }, options: { queue: "flows" } },
        second: { job: "test.ok", args: { n: 11 }, dependsOn: ["first"] },
      },
    });
    const a = await agent("--allow-writes");
    const listed = (await a.call("flows", { name: "mcp.check" })).json<FlowSummary[]>();
    expect(listed).toEqual([expect.objectContaining({ id: started.id, state: "running" })]);
    expect((await a.call("flows", { state: "succeeded", name: "mcp.check" })).json()).toEqual([]);
    const flow = (await a.call("flow", { id: started.id })).json<Flow>();
    expect(flow.steps.map((step) => [step.ref, step.state, step.jobId])).toEqual([
      ["first", "queued", started.jobs.first],
      ["second", "waiting", started.jobs.second],
    ]);
    expect((await a.call("cancel_flow", { id: started.id })).json()).toEqual({
      id: started.id,
      cancelled: true,
    });
    expect((await s.app.flows.get(started.id))?.state).toBe("cancelled");
    const [row] = await s.app.audit.list({ action: "flow.cancel", limit: 1 });
    expect(row).toMatchObject({ actor: "mcp:test-agent", target: started.id, outcome: "ok" });
    const again = await a.call("cancel_flow", { id: started.id });
    expect(again.isError).toBe(true);
    expect(again.text).toContain("Nothing was changed");
    const missing = await a.call("flow", { id: "no-such-flow" });
    expect(missing).toMatchObject({
      isError: true,
      text: expect.stringContaining("no flow with id no-such-flow"),
    });
    expect((await a.call("cancel_flow", { id: "no-such-flow" })).text).toContain("Nothing was changed");
  });

  it("mcp/steps: job answers redacted steps, signal wakes the job (audited), replay resolves a failed step", async () => {
    const local = await stepApp(s.db);
    try {
      const a = await connectAgent(["--allow-writes", "--redact", "**.token", "--database-url", s.db.url], {
        cwd: s.db.dir,
      });
      const { id } = await local.jobs.enqueue("steps.onboard", { user: "ann" });
      await runSteps(local);
      const job = await a.call("job", { id });
      expect(job.text).not.toMatch(/tok_live_secret/);
      expect(job.json<{ steps: JobStep[] }>().steps).toEqual([
        expect.objectContaining({
          name: "create_account",
          state: "done",
          value: { account: "acc_1", session: { token: "[redacted]" } },
        }),
        expect.objectContaining({ name: "approval", kind: "signal", state: "waiting" }),
      ]);
      const sent = await a.call("signal", { id, name: "approval", payload: { by: "ops" }, key: "t-1" });
      expect(sent.json()).toEqual({ id, name: "approval", status: "stored", woke: true, deadLetter: false });
      expect((await a.call("signal", { id, name: "approval", key: "t-1" })).json()).toMatchObject({
        status: "duplicate",
      });
      const [audited] = await s.app.audit.list({ action: "job.signal", limit: 1 });
      expect(audited).toMatchObject({ actor: "mcp:test-agent", target: id, outcome: "duplicate" });
      await runSteps(local);
      expect((await s.app.jobs.get(id))?.result).toEqual({ account: "acc_1", approvedBy: "ops" });
      const late = await a.call("signal", { id, name: "approval" });
      expect(late).toMatchObject({ isError: true, text: expect.stringContaining("takes no signals") });

      const charge = await local.jobs.enqueue("steps.charge", { order: 1 });
      await runSteps(local);
      const dead = await a.call("dead_letter", { id: charge.id });
      expect(dead.text).not.toMatch(/tok_live_secret/);
      expect(dead.json<{ steps: JobStep[] }>().steps.map((step) => step.state)).toEqual(["done", "failed"]);
      const replayed = await a.call("replay", {
        id: charge.id,
        resolve: { charge_card: { paymentId: "m-1" } },
      });
      const { newId } = replayed.json<{ newId: string }>();
      await runSteps(local);
      expect(await s.app.jobs.get(newId)).toMatchObject({ status: "done", result: { paid: "m-1" } });
    } finally {
      await local.close();
    }
  });
});

describe("soniq mcp without a database", () => {
  it("mcp/no-database: exits 1 with one error line on stderr and nothing on stdout (the protocol channel)", async () => {
    const db = sqliteDb();
    try {
      const r = await soniqCli(
        ["mcp", "--no-redact", "--database-url", `sqlite:${join(db.dir, "missing.db")}`],
        {
          cwd: db.dir,
        },
      );
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim()).toMatch(/^error \[SONIQ_CLI_DATABASE_MISSING\]/);
    } finally {
      await db.drop();
    }
  });
});

describe("soniq mcp without @soniq/mcp", () => {
  const missing = (specifier: string) =>
    Object.assign(new Error(`Cannot find package '${specifier}' imported from ${BIN}`), {
      code: "ERR_MODULE_NOT_FOUND",
    });

  it("mcp/not-installed: a missing package is SONIQ_CLI_MISSING_PACKAGE saying how to install it", async () => {
    const err = await loadMcp(() => Promise.reject(missing("@soniq/mcp"))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err).toMatchObject({ code: "SONIQ_CLI_MISSING_PACKAGE", exitCode: 1 });
    expect(describeError(err).line).toBe(
      "[SONIQ_CLI_MISSING_PACKAGE] soniq mcp needs @soniq/mcp. Install it in your project (npm install @soniq/mcp).",
    );
  });

  it("mcp/broken-or-old-package: one that cannot load says to reinstall; one without startMcpServer to upgrade", async () => {
    const broken = await loadMcp(() => Promise.reject(missing("@modelcontextprotocol/sdk"))).catch(
      (e: unknown) => e,
    );
    expect(broken).toMatchObject({ code: "SONIQ_CLI_MISSING_PACKAGE" });
    expect((broken as Error).message).toMatch(
      /@soniq\/mcp is installed but could not be loaded .*npm install @soniq\/mcp/,
    );
    const old = await loadMcp(async () => ({ createMcpServer() {} })).catch((e: unknown) => e);
    expect(old).toMatchObject({ code: "SONIQ_CLI_UNSUPPORTED" });
    expect((old as Error).message).toContain("Upgrade @soniq/mcp");
  });

  it("mcp/installed: the workspace's @soniq/mcp loads", async () => {
    expect(typeof (await loadMcp())).toBe("function");
  });
});
