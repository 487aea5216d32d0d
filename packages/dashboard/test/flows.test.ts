/**
 * Flows in the dashboard: the JSON API (list, one flow, cancel, replay of a held flow's dead-lettered
 * parent) with the same key, scope and body rules as every write, and the pages (list, the graph with a
 * box per step coloured by state and linked to its job or dead letter, the actions a write key sees).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bodyShapeFor, FLOW_BODY } from "../src/api/bodies.js";
import { layoutFlow } from "../src/pages/flow-graph.js";
import { type SeededFlows, withFlows } from "./flows-support.js";
import { call, handlerFor, json, KEYS, READ_KEY, type Seeded, seededApp, WRITE_KEY } from "./support.js";

let app: Seeded;
let flows: SeededFlows;
let keyed: ReturnType<typeof handlerFor>;

beforeEach(async () => {
  app = await seededApp();
  flows = await withFlows(app);
  keyed = handlerFor(app.soniq, { apiKeys: KEYS });
});
afterEach(() => app.soniq.close());

type ErrorBody = { error: { code: string; message: string } };

describe("flows API", () => {
  it("flows/api-list: newest first with counts; ?state and ?name filter; a bad state is 400", async () => {
    const all = await json<{ flows: { id: string; counts: { held: number } }[] }>(
      await call(keyed, "/api/flows", { key: READ_KEY }),
    );
    expect(all.flows.map((f) => f.id)).toEqual([flows.succeeded, flows.running, flows.held]);
    expect(all.flows[2]?.counts.held).toBe(1);
    const held = await json<{ flows: { id: string }[] }>(
      await call(keyed, "/api/flows?state=held", { key: READ_KEY }),
    );
    expect(held.flows.map((f) => f.id)).toEqual([flows.held]);
    const named = await json<{ flows: { id: string }[] }>(
      await call(keyed, "/api/flows?name=orders.fulfil", { key: READ_KEY }),
    );
    expect(named.flows.map((f) => f.id)).toEqual([flows.succeeded, flows.held]);
    const bad = await call(keyed, "/api/flows?state=stuck", { key: READ_KEY });
    expect(bad.status).toBe(400);
    expect((await json<ErrorBody>(bad)).error.message).toContain(
      "running, held, succeeded, failed, cancelled",
    );
  });

  it("flows/api-get: one flow with its steps; an unknown or malformed id is 404", async () => {
    const { flow } = await json<{ flow: { steps: { ref: string; state: string }[] } }>(
      await call(keyed, `/api/flows/${flows.held}`, { key: READ_KEY }),
    );
    expect(flow.steps.map((s) => `${s.ref}:${s.state}`)).toEqual([
      "charge:dead_lettered",
      "reserve:done",
      "ship:held",
      "notify:waiting",
    ]);
    expect(
      (await call(keyed, "/api/flows/0193c6e2-ffff-7000-8000-000000000000", { key: READ_KEY })).status,
    ).toBe(404);
    expect((await call(keyed, "/api/flows/not-an-id", { key: READ_KEY })).status).toBe(404);
  });

  it("flows/api-cancel: a write key cancels with its label as actor; a finished flow is 409", async () => {
    const res = await call(keyed, `/api/flows/${flows.running}/cancel`, { key: WRITE_KEY, body: {} });
    expect(res.status).toBe(200);
    const body = await json<{ cancelled: boolean; flow: { state: string } }>(res);
    expect(body).toMatchObject({ cancelled: true, flow: { state: "cancelled" } });
    const [entry] = await app.soniq.audit.list({ action: "flow.cancel", limit: 1 });
    expect(entry).toMatchObject({ target: flows.running, actor: "dashboard:ops" });
    const again = await call(keyed, `/api/flows/${flows.succeeded}/cancel`, { key: WRITE_KEY, body: {} });
    expect(again.status).toBe(409);
    expect((await json<ErrorBody>(again)).error.message).toContain("is succeeded");
    expect(await app.soniq.audit.list({ action: "flow.cancel" })).toHaveLength(1);
  });

  it("flows/api-replay: replays the held flow's dead-lettered parent, audited with the key's label", async () => {
    const res = await call(keyed, `/api/flows/${flows.held}/steps/charge/replay`, {
      key: WRITE_KEY,
      body: {},
    });
    expect(res.status).toBe(200);
    const body = await json<{ replayed: boolean; jobId: string; deadLetterId: string }>(res);
    expect(body.deadLetterId).toBe(flows.deadCharge);
    expect((await app.soniq.jobs.get(body.jobId))?.status).toBe("queued");
    const audit = await app.soniq.audit.list({ action: "dead_letter.replay" });
    expect(audit[0]).toMatchObject({ actor: "dashboard:ops", target: flows.deadCharge });
    // The new charge took the step's place: once it is done, the held steps run and the flow succeeds.
    flows.approve();
    for (let pass = 0; pass < 20 && (await app.soniq.flows.get(flows.held))?.state !== "succeeded"; pass++)
      await flows.work();
    const resumed = await app.soniq.flows.get(flows.held);
    expect(resumed?.state).toBe("succeeded");
    expect(resumed?.steps[0]?.jobIds).toEqual([flows.deadCharge, body.jobId]);
    const notDead = await call(keyed, `/api/flows/${flows.held}/steps/reserve/replay`, {
      key: WRITE_KEY,
      body: {},
    });
    expect(notDead.status).toBe(409);
    const noStep = await call(keyed, `/api/flows/${flows.held}/steps/nope/replay`, {
      key: WRITE_KEY,
      body: {},
    });
    expect(noStep.status).toBe(404);
  });

  it("flows/api-write-rules: a read key, no key and an unexpected body key are refused; nothing changes", async () => {
    const paths = [`/api/flows/${flows.running}/cancel`, `/api/flows/${flows.held}/steps/charge/replay`];
    for (const path of paths) {
      expect((await call(keyed, path, { key: READ_KEY, body: {} })).status, path).toBe(403);
      expect((await call(keyed, path, { body: {} })).status, path).toBe(401);
      expect((await call(keyed, path, { key: WRITE_KEY, body: { force: true } })).status, path).toBe(400);
      expect((await call(handlerFor(app.soniq), path, { body: {} })).status, path).toBe(403);
    }
    expect(await app.soniq.audit.list({ action: "flow.cancel" })).toEqual([]);
    expect((await app.soniq.flows.get(flows.running))?.state).toBe("running");
    expect((await app.soniq.deadLetters.get(flows.deadCharge))?.resurrectionCount).toBe(0);
    expect(bodyShapeFor(`/flows/${flows.held}/cancel`)).toBe(FLOW_BODY);
    expect(bodyShapeFor(`/flows/${flows.held}/steps/charge/replay`)).toBe(FLOW_BODY);
  });
});

describe("flow pages", () => {
  const page = async (path: string, key = WRITE_KEY): Promise<string> => {
    const res = await call(keyed, path, { key });
    expect(res.status, path).toBe(200);
    return res.text();
  };

  it("flows/page-list: a row per flow linking to its page, the state filter, Flows in the navigation", async () => {
    const text = await page("/flows?state=held");
    expect(text).toContain(`href="/flows/${flows.held}"`);
    expect(text).not.toContain(`data-flow-id="${flows.succeeded}"`);
    expect(text).toContain("1/4 done, 1 held, 1 failed");
    expect(text).toMatch(/<a href="\/flows" aria-current="page">Flows<\/a>/);
    const bad = await call(keyed, "/flows?state=stuck", { key: READ_KEY });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("state takes one of");
  });

  it("flows/page-graph: a box per step coloured by state, linked to its job or dead letter, an edge per dependency", async () => {
    const text = await page(`/flows/${flows.held}`);
    expect(text).toContain('data-testid="flow-graph"');
    for (const [ref, state] of [
      ["charge", "dead_lettered"],
      ["reserve", "done"],
      ["ship", "held"],
      ["notify", "waiting"],
    ])
      expect(text).toContain(`class="step ${state}" data-ref="${ref}"`);
    expect(text).toContain(`href="/dead-letters/${flows.deadCharge}" aria-label="charge (dead_lettered)"`);
    expect(text).toContain(
      `href="/jobs/${(await app.soniq.flows.get(flows.held))?.steps[1]?.jobId}" aria-label="reserve (done)"`,
    );
    expect(text.match(/<path class="edge"/g)).toHaveLength(3);
    expect(text).toContain('data-from="charge" data-to="ship"');
    expect(text).toContain("Held: a parent was dead-lettered");
    expect(text).toContain(`data-post="/api/flows/${flows.held}/steps/charge/replay"`);
    expect(text).toContain(`data-post="/api/flows/${flows.held}/cancel"`);
  });

  it("flows/page-read-only: a read key sees the graph but no cancel or replay button; a finished flow offers none", async () => {
    const read = await page(`/flows/${flows.held}`, READ_KEY);
    expect(read).toContain('data-testid="flow-graph"');
    expect(read).not.toContain("data-post=");
    expect(read).toContain("Your key is read-only.");
    expect(await page(`/flows/${flows.succeeded}`)).not.toContain("data-post=");
  });

  it("flows/layout: parents above dependents, every box apart, a fan-in of 200 laid out", () => {
    const s = (ref: string, dependsOn: string[] = []) => ({
      ref,
      jobName: "j",
      state: "done",
      dependsOn,
      href: null,
    });
    const diamond = layoutFlow([s("a"), s("b", ["a"]), s("c", ["a"]), s("d", ["b", "c"])]);
    const y = Object.fromEntries(diamond.nodes.map((n) => [n.step.ref, n.y]));
    expect(y.a).toBeLessThan(y.b as number);
    expect(y.b).toBe(y.c);
    expect(y.c).toBeLessThan(y.d as number);
    const parents = Array.from({ length: 200 }, (_, i) => s(`p${i}`));
    const fanIn = layoutFlow([
      ...parents,
      s(
        "total",
        parents.map((p) => p.ref),
      ),
    ]);
    expect(fanIn.edges).toHaveLength(200);
    const xs = fanIn.nodes
      .filter((n) => n.step.ref !== "total")
      .map((n) => n.x)
      .sort((a, b) => a - b);
    for (let i = 1; i < xs.length; i++)
      expect((xs[i] as number) - (xs[i - 1] as number)).toBeGreaterThanOrEqual(168);
  });
});
