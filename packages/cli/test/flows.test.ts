/**
 * `soniq flows list | show | cancel` through the built binary, on an app module (--module) whose flows
 * facet answers from fixed flows (fixtures/flows.ts): the table, the filters, the tree `show` draws, the
 * cancel's actor and exit codes, and the one-line errors.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flowTree } from "../src/flow-tree.js";
import { assertBuilt, expectNoRunningChildren, json, type Result, soniqCli } from "./cli.js";

const APP = fileURLToPath(new URL("./fixtures/flows.ts", import.meta.url));
const HELD = "0193c6e2-aaaa-7000-8000-000000000001";
const RUNNING = "0193c6e2-aaaa-7000-8000-000000000002";
const SUCCEEDED = "0193c6e2-aaaa-7000-8000-000000000003";

describe("soniq flows", () => {
  let dir: string;
  const cli = (...args: string[]): Promise<Result> =>
    soniqCli([...args, "--module", APP], { cwd: dir, env: { FLOWS_CANCEL_LOG: join(dir, "cancel.log") } });

  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), "soniq-cli-flows-"));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    expectNoRunningChildren();
  });

  it("flows/list: newest first, with state and step counts; --state and --name filter", async () => {
    const r = await cli("flows", "list");
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+STATE\s+STEPS\s+CREATED\s+FINISHED$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([SUCCEEDED, RUNNING, HELD]);
    expect(r.stdout).toContain("1/4 done, 1 held, 1 failed");
    const held = await cli("flows", "list", "--state", "held", "--json");
    expect(json<{ id: string }[]>(held).map((f) => f.id)).toEqual([HELD]);
    const named = await cli("flows", "list", "--name", "orders.fulfil", "--json");
    expect(json<{ id: string }[]>(named).map((f) => f.id)).toEqual([SUCCEEDED, HELD]);
  });

  it("flows/list-usage: an unknown --state is a usage error (exit 2) naming the states", async () => {
    const r = await cli("flows", "list", "--state", "stuck");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--state takes one of running, held, succeeded, failed, cancelled");
  });

  it("flows/show-tree: the header, then the steps as a tree with states; a held flow says how to resume", async () => {
    const r = await cli("flows", "show", HELD);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/state\s+held/);
    expect(r.stdout).toMatch(/steps\s+1\/4 done, 1 dead_lettered, 1 held, 1 waiting/);
    const tree = r.stdout.split("\n").filter((l) => /orders\.\w+ {2}0193|see above/.test(l));
    expect(tree).toEqual([
      "charge  dead_lettered  orders.charge  0193c6e2-0000-7000-8000-000000charge",
      "└── ship  held  orders.ship  0193c6e2-0000-7000-8000-00000000ship  (also after reserve)",
      "    └── notify  waiting  orders.notify  0193c6e2-0000-7000-8000-000000notify",
      "reserve  done  orders.reserve  0193c6e2-0000-7000-8000-00000reserve",
      "└── ship (see above)",
    ]);
    expect(r.stdout).toContain("replay the dead-lettered parent to resume");
  });

  it("flows/show-json: the flow as soniq.flows.get returns it", async () => {
    const flow = json<{ id: string; steps: { ref: string; dependsOn: string[] }[] }>(
      await cli("flows", "show", RUNNING, "--json"),
    );
    expect(flow.id).toBe(RUNNING);
    expect(flow.steps.map((s) => s.ref)).toEqual(["a", "b", "c", "d"]);
    expect(flow.steps[3]?.dependsOn).toEqual(["b", "c"]);
  });

  it("flows/not-found: show and cancel of an unknown id exit 1 with one line", async () => {
    for (const cmd of ["show", "cancel"]) {
      const r = await cli("flows", cmd, "0193c6e2-ffff-7000-8000-000000000000");
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error \[SONIQ_CLI_NOT_FOUND\] no flow with id .*soniq flows list\.\n$/);
    }
  });

  it("flows/cancel: cancels with the CLI's actor; a finished flow is not cancelled (exit 1)", async () => {
    const r = await cli("flows", "cancel", RUNNING, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toEqual({ id: RUNNING, cancelled: true, state: "cancelled" });
    expect(readFileSync(join(dir, "cancel.log"), "utf8")).toMatch(
      new RegExp(`^${RUNNING} cli:\\S+@\\S+\\n$`),
    );
    const done = await cli("flows", "cancel", SUCCEEDED);
    expect(done.code).toBe(1);
    expect(done.stdout).toContain(`not cancelled ${SUCCEEDED}: the flow is succeeded`);
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
