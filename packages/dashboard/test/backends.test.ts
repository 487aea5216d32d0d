/**
 * The routes where the storage matters, on SQLite and PostgreSQL: malformed ids (a uuid column on
 * Postgres) are 404 not 500, cursor pages and search over real ordering, bulk replay and purge, and the
 * flow routes over real flows (last: its jobs would change what the others count); and durable steps (their own
 * app): the timeline, a signal and a replay with a resolved step.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import type { Backend } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withFlows } from "./flows-support.js";
import { createDatabase } from "./pgdb.js";
import { type StepsApp, stepsApp } from "./steps-support.js";
import { call, handlerFor, json, KEYS, type Seeded, seededApp, WRITE_KEY } from "./support.js";

interface Target {
  name: string;
  make(): Promise<{ backend: Backend<unknown>; cleanup(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: "sqlite",
    async make() {
      const dir = mkdtempSync(join(tmpdir(), "soniq-dash-"));
      return {
        backend: sqliteBackend({ filename: join(dir, "soniq.db") }) as Backend<unknown>,
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "postgres",
    async make() {
      const db = await createDatabase();
      return {
        backend: postgresBackend({ connectionString: db.url }) as Backend<unknown>,
        cleanup: () => db.drop(),
      };
    },
  },
];

describe.each(targets)("on $name", (target) => {
  let app: Seeded;
  let cleanup: () => Promise<void>;
  let handler: ReturnType<typeof handlerFor>;

  beforeAll(async () => {
    const made = await target.make();
    cleanup = made.cleanup;
    app = await seededApp(made.backend);
    handler = handlerFor(app.soniq, { apiKeys: KEYS });
  });
  afterAll(async () => {
    await app.soniq.close();
    await cleanup();
  });

  const get = (path: string) => call(handler, path, { key: WRITE_KEY });
  const post = (path: string, body?: unknown) =>
    call(handler, path, { method: "POST", key: WRITE_KEY, body });

  it("backend/malformed-ids-404: ids the column cannot hold are 404 on every route", async () => {
    for (const id of ["not-a-uuid", "123", "00000000-0000-0000-0000-00000000000g"]) {
      expect((await get(`/api/jobs/${id}`)).status, id).toBe(404);
      expect((await get(`/api/dead-letters/${id}`)).status, id).toBe(404);
      expect((await post(`/api/jobs/${id}/cancel`)).status, id).toBe(404);
      expect((await post(`/api/dead-letters/${id}/replay`)).status, id).toBe(404);
      expect((await post(`/api/dead-letters/${id}/purge`)).status, id).toBe(404);
    }
    expect((await get("/api/jobs?q=not-a-uuid")).status).toBe(200);
  });

  it("backend/cursor-pages: every job exactly once across pages, newest first; previous pages back", async () => {
    type JobsPage = { jobs: { id: string }[]; nextCursor: string | null; prevCursor: string | null };
    const pages: JobsPage[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const page: JobsPage = await json(await get(`/api/jobs?limit=5${cursor ? `&cursor=${cursor}` : ""}`));
      pages.push(page);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    const seen = pages.flatMap((p) => p.jobs.map((j) => j.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...app.done, ...app.retrying, ...app.reports].sort());
    expect(seen).toEqual(((await json(await get("/api/jobs?limit=100"))) as JobsPage).jobs.map((j) => j.id));
    for (let i = pages.length - 1; i > 0; i--) {
      const back: JobsPage = await json(await get(`/api/jobs?limit=5&cursor=${pages[i]?.prevCursor}`));
      expect(back.jobs.map((j) => j.id)).toEqual(pages[i - 1]?.jobs.map((j) => j.id));
    }
  });

  it("backend/search-and-filters: error text (core's q: any case, % literal) and reason filters", async () => {
    const jobs = await json<{ jobs: { id: string }[] }>(await get("/api/jobs?q=gateway"));
    expect(jobs.jobs.map((j) => j.id)).toEqual(app.retrying);
    const upper = await json<{ jobs: { id: string }[] }>(await get("/api/jobs?q=GATEWAY%20TIME"));
    expect(upper.jobs.map((j) => j.id)).toEqual(app.retrying);
    const percent = await json<{ jobs: unknown[]; nextCursor: unknown }>(await get("/api/jobs?q=%25"));
    expect(percent).toMatchObject({ jobs: [], nextCursor: null });
    const dead = await json<{ deadLetters: { id: string }[] }>(
      await get("/api/dead-letters?reason=permanent_failure&q=declined"),
    );
    expect(dead.deadLetters.map((d) => d.id).sort()).toEqual([...app.dead].sort());
  });

  it("backend/bulk: dry-run count, replay by filter, purge by ids", async () => {
    const dry = await json<{ count: number }>(
      await post("/api/dead-letters/replay-where", { filter: { reason: "permanent_failure" }, dryRun: true }),
    );
    expect(dry.count).toBe(3);
    const run = await json<{ count: number; refused: number }>(
      // Every dead letter here failed permanently: the filter narrows nothing, so the run says all: true.
      await post("/api/dead-letters/replay-where", { filter: { reason: "permanent_failure" }, all: true }),
    );
    expect(run).toEqual({ action: "replay", dryRun: false, count: 3, refused: 0 });
    expect((await app.soniq.jobs.list({ jobName: "billing.charge", status: "queued" })).length).toBe(4);
    const unknown = "0193c6e2-ffff-7000-8000-000000000000";
    const purged = await json<{ count: number }>(
      await post("/api/dead-letters/purge-where", { ids: [...app.dead.slice(0, 2), unknown] }),
    );
    expect(purged).toEqual({ action: "purge", dryRun: false, count: 2, refused: 0, notFound: 1 });
    expect(await app.soniq.audit.list({ action: "dead_letter.purge_where" })).toHaveLength(1);
    expect((await post("/api/dead-letters/purge-where", { ids: ["not-a-uuid"] })).status).toBe(400);
    expect((await app.soniq.jobs.stats()).dead_letter).toBe(1);
  });

  it("backend/flows: list, a flow's page and graph, the held parent's replay and cancel on real flows", async () => {
    const flows = await withFlows(app);
    const list = await json<{ flows: { id: string; state: string }[] }>(await get("/api/flows"));
    expect(list.flows.map((f) => `${f.id}:${f.state}`)).toEqual([
      `${flows.succeeded}:succeeded`,
      `${flows.running}:running`,
      `${flows.held}:held`,
    ]);
    const page = await (await get(`/flows/${flows.held}`)).text();
    expect(page.match(/<g class="step /g)).toHaveLength(4);
    expect(page).toContain(`href="/dead-letters/${flows.deadCharge}"`);
    expect((await get("/api/flows/not-a-uuid")).status).toBe(404);
    expect((await get("/api/flows/0193c6e2-ffff-7000-8000-000000000000")).status).toBe(404);
    const replay = await post(`/api/flows/${flows.held}/steps/charge/replay`, {});
    expect(replay.status).toBe(200);
    flows.approve();
    for (let pass = 0; pass < 20 && (await app.soniq.flows.get(flows.held))?.state !== "succeeded"; pass++)
      await flows.work();
    expect((await app.soniq.flows.get(flows.held))?.state).toBe("succeeded");
    expect((await post(`/api/flows/${flows.running}/cancel`, {})).status).toBe(200);
    expect((await app.soniq.flows.get(flows.running))?.state).toBe("cancelled");
    expect((await post(`/api/flows/${flows.running}/cancel`, {})).status).toBe(409);
  });
});

describe.each(targets)("steps on $name", (target) => {
  let app: StepsApp;
  let cleanup: () => Promise<void>;
  let handler: ReturnType<typeof handlerFor>;

  beforeAll(async () => {
    const made = await target.make();
    cleanup = made.cleanup;
    app = await stepsApp({ backend: made.backend, redact: ["token"] });
    handler = handlerFor(app.soniq, { apiKeys: KEYS });
  });
  afterAll(async () => {
    await app.soniq.close();
    await cleanup();
  });

  const post = (path: string, body?: unknown) =>
    call(handler, path, { method: "POST", key: WRITE_KEY, body });

  it("backend/steps: the timeline (redacted), a signal that wakes the job, a replay with a resolved step; malformed ids 404", async () => {
    type Steps = { steps: { name: string; state: string; value: unknown }[] };
    const dead = await json<Steps>(await call(handler, `/api/dead-letters/${app.dead}`, { key: WRITE_KEY }));
    expect(dead.steps.map((s) => [s.name, s.state])).toEqual([
      ["create_account", "done"],
      ["grace_period", "done"],
      ["approval", "done"],
      ["charge_card", "failed"],
    ]);
    expect(dead.steps[0]?.value).toEqual({ accountId: "acc_bob", token: "[redacted]" });
    const signal = await post(`/api/jobs/${app.waiting}/signal`, { name: "approval", key: "k-1" });
    expect(await json(signal)).toMatchObject({ status: "stored", woke: true });
    expect(
      await json(await post(`/api/jobs/${app.waiting}/signal`, { name: "approval", key: "k-1" })),
    ).toMatchObject({ status: "duplicate" });
    expect((await post(`/api/jobs/${app.done}/signal`, { name: "approval" })).status).toBe(409);
    const replay = await post(`/api/dead-letters/${app.dead}/replay`, {
      resolve: { charge_card: { paymentId: "m-1" } },
    });
    const { jobId } = await json<{ jobId: string }>(replay);
    const replayed = await json<Steps>(await call(handler, `/api/jobs/${jobId}`, { key: WRITE_KEY }));
    expect(replayed.steps.map((s) => [s.name, s.state])).toContainEqual(["charge_card", "done"]);
    for (const id of ["not-a-uuid", "00000000-0000-0000-0000-00000000000g"]) {
      expect((await post(`/api/jobs/${id}/signal`, { name: "approval" })).status, id).toBe(404);
    }
  });
});
