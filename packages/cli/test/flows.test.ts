/**
 * `soniq flows list | show | cancel` through the built binary, on a database with real flows: one held by its
 * dead-lettered charge, one running (its steps on a queue no worker serves), one succeeded. The table and its
 * filters, the tree `show` draws, cancel with its audited actor and exit codes, and the one-line errors.
 */
import { PermanentError, type Soniq } from "@soniq/core";
import { eventually } from "@soniq/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flowTree } from "../src/flow-tree.js";
import {
  assertBuilt,
  expectNoRunningChildren,
  json,
  openApp,
  type Result,
  soniqCli,
  type TestDb,
} from "./cli.js";
import { BACKENDS } from "./seed.js";

/** Starts the three flows and runs a worker on queue "flows" until the held and the succeeded one settled. */
async function seedFlows(app: Soniq): Promise<{ held: string; running: string; succeeded: string }> {
  app.job("flow.ok", async () => ({ ok: true }), { queue: "flows" });
  app.job(
    "flow.fail",
    async () => {
      throw new PermanentError("card declined");
    },
    { queue: "flows" },
  );
  const held = await app.flows.start({
    name: "orders.fulfil",
    steps: {
      charge: { job: "flow.fail" },
      reserve: { job: "flow.ok" },
      ship: { job: "flow.ok", dependsOn: ["charge", "reserve"] },
      notify: { job: "flow.ok", dependsOn: ["ship"], onParentFailure: "run" },
    },
  });
  const running = await app.flows.start({
    name: "reports.build",
    steps: {
      a: { job: "flow.ok", options: { queue: "later" } },
      b: { job: "flow.ok", dependsOn: ["a"], options: { queue: "later" } },
      c: { job: "flow.ok", dependsOn: ["a"], options: { queue: "later" } },
      d: { job: "flow.ok", dependsOn: ["b", "c"], options: { queue: "later" } },
    },
  });
  const succeeded = await app.flows.start({
    name: "orders.fulfil",
    steps: { charge: { job: "flow.ok" }, ship: { job: "flow.ok", dependsOn: ["charge"] } },
  });
  const worker = app.worker({ queues: ["flows"] });
  await eventually(
    async () => {
      await worker.runOnce({ maxJobs: 20 });
      expect((await app.flows.get(held.id))?.state).toBe("held");
      expect((await app.flows.get(succeeded.id))?.state).toBe("succeeded");
    },
    { timeoutMs: 20_000 },
  );
  return { held: held.id, running: running.id, succeeded: succeeded.id };
}

describe.each(BACKENDS)("soniq flows on %s", (_kind, makeDb) => {
  let db: TestDb;
  let app: Soniq;
  let ids: { held: string; running: string; succeeded: string };
  const cli = (...args: string[]): Promise<Result> =>
    soniqCli([...args, "--database-url", db.url], { cwd: db.dir });

  beforeAll(async () => {
    assertBuilt();
    db = makeDb();
    await db.create();
    const setup = await cli("setup");
    expect(setup.code, setup.stderr).toBe(0);
    app = await openApp(db);
    ids = await seedFlows(app);
  });
  afterAll(async () => {
    expectNoRunningChildren();
    await app?.close();
    await db?.drop();
  });

  it("flows/list: newest first, with state and step counts; --state and --name filter", async () => {
    const r = await cli("flows", "list");
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+STATE\s+STEPS\s+CREATED\s+FINISHED$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([ids.succeeded, ids.running, ids.held]);
    expect(r.stdout).toContain("1/4 done, 1 held, 1 failed");
    const held = await cli("flows", "list", "--state", "held", "--json");
    expect(json<{ id: string }[]>(held).map((f) => f.id)).toEqual([ids.held]);
    const named = await cli("flows", "list", "--name", "orders.fulfil", "--json");
    expect(json<{ id: string; counts: { total: number } }[]>(named).map((f) => f.id)).toEqual([
      ids.succeeded,
      ids.held,
    ]);
  });

  it("flows/list-usage: an unknown --state is a usage error (exit 2) naming the states", async () => {
    const r = await cli("flows", "list", "--state", "stuck");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--state takes one of running, held, succeeded, failed, cancelled");
  });

  it("flows/show-tree: the header, then the steps as a tree with states; a held flow says how to resume", async () => {
    const r = await cli("flows", "show", ids.held);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/state\s+held/);
    expect(r.stdout).toMatch(/steps\s+1\/4 done, 1 dead_lettered, 1 held, 1 waiting/);
    const flow = await app.flows.get(ids.held);
    const id = (ref: string) => flow?.steps.find((s) => s.ref === ref)?.jobId;
    const tree = r.stdout.split("\n").filter((l) => /flow\.(ok|fail) {2}|see above/.test(l));
    expect(tree).toEqual([
      `charge  dead_lettered  flow.fail  ${id("charge")}`,
      `└── ship  held  flow.ok  ${id("ship")}  (also after reserve)`,
      `    └── notify  waiting  flow.ok  ${id("notify")}`,
      `reserve  done  flow.ok  ${id("reserve")}`,
      "└── ship (see above)",
    ]);
    expect(r.stdout).toContain("replay the dead-lettered parent to resume");
    // The dead-lettered step's id is its dead letter's.
    expect(await app.deadLetters.get(id("charge") as string)).not.toBeNull();
  });

  it("flows/show-json: the flow as soniq.flows.get returns it", async () => {
    const flow = json<{ id: string; steps: { ref: string; state: string; dependsOn: string[] }[] }>(
      await cli("flows", "show", ids.running, "--json"),
    );
    expect(flow.id).toBe(ids.running);
    expect(flow.steps.map((s) => `${s.ref}:${s.state}`)).toEqual([
      "a:queued",
      "b:waiting",
      "c:waiting",
      "d:waiting",
    ]);
    expect(flow.steps[3]?.dependsOn).toEqual(["b", "c"]);
  });

  it("flows/not-found: show and cancel of an unknown id exit 1 with one line", async () => {
    for (const cmd of ["show", "cancel"])
      for (const id of ["0193c6e2-ffff-7000-8000-000000000000", "not-a-flow-id"]) {
        const r = await cli("flows", cmd, id);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/^error \[SONIQ_CLI_NOT_FOUND\] no flow with id .*soniq flows list\.\n$/);
      }
  });

  it("flows/cancel: cancels every open step, audited with the CLI's actor; a finished flow is not (exit 1)", async () => {
    const r = await cli("flows", "cancel", ids.running, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toEqual({ id: ids.running, cancelled: true, state: "cancelled" });
    const flow = await app.flows.get(ids.running);
    expect(new Set(flow?.steps.map((s) => s.state))).toEqual(new Set(["cancelled"]));
    const [entry] = await app.audit.list({ action: "flow.cancel", limit: 1 });
    expect(entry).toMatchObject({ target: ids.running, actor: expect.stringMatching(/^cli:\S+@\S+$/) });
    const done = await cli("flows", "cancel", ids.succeeded);
    expect(done.code).toBe(1);
    expect(done.stdout).toContain(`not cancelled ${ids.succeeded}: the flow is succeeded`);
  });
});

describe("flow tree", () => {
  const s = (ref: string, dependsOn: string[] = []) => ({
    ref,
    jobId: ref,
    jobName: "j",
    state: "done",
    dependsOn,
  });

  it("flows/tree-fan-in: 10,000 parents of one step draw without recursion, the child once in full", () => {
    const parents = Array.from({ length: 10_000 }, (_, i) => s(`p${i}`));
    const lines = flowTree([
      ...parents,
      s(
        "total",
        parents.map((p) => p.ref),
      ),
    ]);
    expect(lines).toHaveLength(20_000);
    expect(lines.filter((l) => l.includes("total  done"))).toHaveLength(1);
    expect(lines.filter((l) => l.endsWith("total (see above)"))).toHaveLength(9_999);
  });

  it("flows/tree-deep-chain: a chain of 5,000 steps nests without overflowing the stack", () => {
    const chain = Array.from({ length: 5_000 }, (_, i) => s(`s${i}`, i === 0 ? [] : [`s${i - 1}`]));
    const lines = flowTree(chain);
    expect(lines).toHaveLength(5_000);
    expect(lines[4_999]).toMatch(/^ {19992}└── s4999 {2}done/);
  });
});
