/**
 * The audit log through the public API on every backend (memory; SQLite on a temp file per test;
 * PostgreSQL on one database for this file): each operator action leaves exactly one row with the
 * caller's actor; an action that finds nothing leaves one `not_found` row; and a single-target action's
 * row goes with its change (it is written even when `audit.record`, the stand-alone write, is broken).
 */
import { AUDIT_ACTIONS, type AuditAction, type AuditEntry, type Backend, Soniq } from "@soniq/core";
import type { CompleteBackend } from "@soniq/core/backend";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ALL_KINDS, uniqueName } from "./runtime-support.js";
import { type Receiver, receiver, SECRET, SECRET_KEY } from "./webhooks-support.js";

const row = (r: AuditEntry) => [r.action, r.actor, r.target, r.params, r.outcome, r.details];

/** This test's rows, newest first (Postgres keeps one database for the file, so rows of other tests too). */
async function rowsOf(soniq: Soniq, mine: (r: AuditEntry) => boolean): Promise<AuditEntry[]> {
  return (await soniq.audit.list({ limit: 1000 })).filter(mine);
}

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "audit/matrix on %s",
  { timeout: 30_000 },
  (_name, make) => {
    const kind = make();
    const opened: Soniq[] = [];
    const receivers: Receiver[] = [];
    /** The backend each app was built on, so another instance can share its storage (`rotated`). */
    const backends = new Map<Soniq, Backend<unknown>>();

    beforeAll(() => kind.setup(), 30_000);
    afterAll(() => kind.teardown(), 30_000);
    afterEach(async () => {
      for (const soniq of opened.splice(0)) await soniq.close();
      for (const r of receivers.splice(0)) await r.close();
    });

    async function app(backend: Backend<unknown> = kind.create()): Promise<Soniq> {
      const webhooks = { secretKey: SECRET_KEY, allowPrivateNetworks: true };
      const soniq = new Soniq({ backend, webhooks });
      opened.push(soniq);
      backends.set(soniq, backend);
      await soniq.setup();
      return soniq;
    }

    /**
     * Another instance on `soniq`'s storage (which it leaves open) whose key is a keyring: the app's key as k1,
     * a new one as k2, the current key, as during a key rotation.
     */
    function rotated(soniq: Soniq): Soniq {
      const backend = backends.get(soniq) as Backend<unknown>;
      const secretKey = { current: "k2", keys: { k1: SECRET_KEY, k2: `${SECRET_KEY}-rotated` } };
      const other = new Soniq({
        backend: { ...backend, close: async () => {} },
        webhooks: { secretKey, allowPrivateNetworks: true },
      });
      opened.push(other);
      return other;
    }

    /** Dead letters of a job that always fails, on a fresh queue. */
    async function deadLetters(soniq: Soniq, queue: string, n: number): Promise<string[]> {
      const job = soniq.job(
        `audit.fails_${queue}`,
        async () => {
          throw new Error("boom");
        },
        { queue, maxAttempts: 1 },
      );
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await job.enqueue({ i })).id);
      await soniq.worker({ queues: [queue] }).runOnce();
      for (const id of ids) expect(await soniq.deadLetters.get(id)).not.toBeNull();
      return ids;
    }

    /**
     * Every single-target action once, each with the actor `${tag}-<action>`; returns the rows they should
     * leave, newest first.
     */
    async function singleTargetActions(soniq: Soniq, tag: string): Promise<unknown[][]> {
      const queue = uniqueName("q");
      const schedule = `audit.${queue}`;
      const [dead] = await deadLetters(soniq, queue, 1);
      const replayed = await soniq.deadLetters.replay(dead as string, { actor: `${tag}-replay` });
      const sent = await soniq.jobs.signal(
        replayed as string,
        "go",
        { n: 1 },
        { key: "k", actor: `${tag}-signal` },
      );
      expect(sent.status).toBe("stored");
      expect(await soniq.jobs.cancel(replayed as string, { actor: `${tag}-cancel` })).toBe(true);
      expect(await soniq.deadLetters.purge(dead as string, { actor: `${tag}-purge` })).toBe(true);
      await soniq.queues.pause(queue, { actor: `${tag}-qpause` });
      await soniq.queues.configure(queue, { concurrency: 2 }, { actor: `${tag}-qconfigure` });
      await soniq.queues.resume(queue, { actor: `${tag}-qresume` });
      soniq.schedules.declare(schedule, { every: "1h" });
      soniq.job(schedule, async () => null, { queue });
      const jobId = await soniq.schedules.trigger(schedule, { actor: `${tag}-trigger` }); // stores it first
      expect(await soniq.schedules.pause(schedule, { actor: `${tag}-spause` })).toBe(true);
      expect(await soniq.schedules.resume(schedule, { actor: `${tag}-sresume` })).toBe(true);
      expect(await soniq.schedules.remove(schedule, { actor: `${tag}-sremove` })).toBe(true);
      soniq.job(`${schedule}_step`, async () => null, { queue });
      const flow = await soniq.flows.start({ steps: { a: { job: `${schedule}_step` } } });
      expect(await soniq.flows.cancel(flow.id, { actor: `${tag}-fcancel` })).toBe(true);
      const hooks = await webhookActions(soniq, tag);
      const replayParams = { queue: null, priority: null, runAt: null };
      return [
        ...hooks,
        ["flow.cancel", `${tag}-fcancel`, flow.id, null, "ok", null],
        ["schedule.remove", `${tag}-sremove`, schedule, null, "ok", null],
        ["schedule.resume", `${tag}-sresume`, schedule, null, "ok", null],
        ["schedule.pause", `${tag}-spause`, schedule, null, "ok", null],
        ["schedule.trigger", `${tag}-trigger`, schedule, null, "ok", { jobId }],
        ["queue.resume", `${tag}-qresume`, queue, null, "ok", null],
        ["queue.configure", `${tag}-qconfigure`, queue, { concurrency: 2 }, "ok", null],
        ["queue.pause", `${tag}-qpause`, queue, null, "ok", null],
        ["dead_letter.purge", `${tag}-purge`, dead, null, "ok", null],
        ["job.cancel", `${tag}-cancel`, replayed, null, "ok", null],
        ["job.signal", `${tag}-signal`, replayed, { name: "go", key: "k", bytes: 7 }, "ok", null],
        ["dead_letter.replay", `${tag}-replay`, dead, replayParams, "ok", { newId: replayed }],
      ];
    }

    /**
     * Register, update, re-seal (the only endpoint there is, from another instance holding a keyring), redeliver
     * (a delivery failed through the backend) and remove an endpoint.
     */
    async function webhookActions(soniq: Soniq, tag: string): Promise<unknown[][]> {
      // A queue of its own: the paused-then-resumed one may still read as paused to a claim right away.
      const queue = uniqueName("hq");
      const r = await receiver();
      receivers.push(r);
      const input = { url: r.url, events: ["job.completed" as const], secret: SECRET };
      const endpoint = await soniq.webhooks.register(input, { actor: `${tag}-wregister` });
      await soniq.webhooks.update(endpoint.id, { maxAttempts: 1 }, { actor: `${tag}-wupdate` });
      const resealed = await rotated(soniq).webhooks.reseal({ actor: `${tag}-wreseal` });
      expect(resealed).toMatchObject({ keyId: "k2", resealed: [endpoint.id], alreadyCurrent: 0, failed: [] });
      soniq.job(`audit.hook_${queue}`, async () => 1, { queue });
      await soniq.jobs.enqueue(`audit.hook_${queue}`, {});
      // Not delivered by the run: the delivery is failed through the backend below.
      await soniq.worker({ queues: [queue], deliverWebhooks: false }).runOnce();
      const claimed = (await soniq.backend.webhooks.claimDue({ limit: 1000, leaseMs: 60_000 })).find(
        (d) => d.endpointId === endpoint.id,
      );
      if (!claimed) throw new Error("setup: the job's completion must have written a delivery");
      const failed = {
        status: "failed" as const,
        delayMs: 0,
        lastError: "x",
        responseStatus: null,
        responseBody: null,
      };
      await soniq.backend.webhooks.recordAttempt({ id: claimed.id, attempt: claimed.attempts, ...failed });
      expect(await soniq.webhooks.redeliver(claimed.id, { actor: `${tag}-wredeliver` })).toBe(true);
      expect(await soniq.webhooks.remove(endpoint.id, { actor: `${tag}-wremove` })).toBe(true);
      const registered = { url: r.url, events: ["job.completed"], active: true };
      return [
        ["webhook.remove", `${tag}-wremove`, endpoint.id, null, "ok", null],
        ["webhook.redeliver", `${tag}-wredeliver`, claimed.id, null, "ok", null],
        ["webhook.reseal", `${tag}-wreseal`, endpoint.id, { fromKeyId: null, toKeyId: "k2" }, "ok", null],
        ["webhook.update", `${tag}-wupdate`, endpoint.id, { maxAttempts: 1 }, "ok", null],
        ["webhook.register", `${tag}-wregister`, endpoint.id, registered, "ok", null],
      ];
    }

    it("audit/schedule-actions: trigger, pause, resume and remove each write one row with the actor, target and details", async () => {
      const soniq = await app();
      const name = `reports.${uniqueName("hourly")}`;
      soniq.job(name, async () => null);
      soniq.schedules.declare(name, { cron: "0 * * * *" });
      const jobId = await soniq.schedules.trigger(name, { actor: "tina" });
      expect((await soniq.jobs.get(jobId))?.status).toBe("queued");
      expect(await soniq.schedules.pause(name, { actor: "paul" })).toBe(true);
      expect(await soniq.schedules.resume(name, { actor: "rita" })).toBe(true);
      expect(await soniq.schedules.remove(name)).toBe(true);
      expect((await rowsOf(soniq, (r) => r.target === name)).map(row)).toEqual([
        ["schedule.remove", "api", name, null, "ok", null],
        ["schedule.resume", "rita", name, null, "ok", null],
        ["schedule.pause", "paul", name, null, "ok", null],
        ["schedule.trigger", "tina", name, null, "ok", { jobId }],
      ]);
    });

    it("audit/schedule-miss: an unknown schedule changes nothing and leaves one not_found row per call; bad input none", async () => {
      const soniq = await app();
      const actor = { actor: uniqueName("ops") };
      const name = `reports.${uniqueName("unknown")}`;
      expect(await soniq.schedules.pause(name, actor)).toBe(false);
      expect(await soniq.schedules.resume(name, actor)).toBe(false);
      expect(await soniq.schedules.remove(name, actor)).toBe(false);
      await expect(soniq.schedules.trigger(name, actor)).rejects.toMatchObject({
        code: "SONIQ_INVALID_ARGUMENT",
      });
      await expect(soniq.schedules.pause("", actor)).rejects.toMatchObject({
        code: "SONIQ_INVALID_ARGUMENT",
      });
      await expect(soniq.schedules.trigger(name, { actor: "" })).rejects.toMatchObject({
        code: "SONIQ_INVALID_ARGUMENT",
      });
      expect(await soniq.schedules.get(name)).toBeNull();
      const mine = (r: AuditEntry) => r.target === name || r.target === "" || r.actor === actor.actor;
      expect((await rowsOf(soniq, mine)).map(row)).toEqual([
        ["schedule.trigger", actor.actor, name, null, "not_found", null],
        ["schedule.remove", actor.actor, name, null, "not_found", null],
        ["schedule.resume", actor.actor, name, null, "not_found", null],
        ["schedule.pause", actor.actor, name, null, "not_found", null],
      ]);
    });

    it("audit/row-commits-with-the-action: with audit.record failing, every single-target action still succeeds and writes its row", async () => {
      const base = kind.create() as CompleteBackend<unknown>;
      const broken: Backend<unknown> = {
        ...base,
        audit: {
          ...base.audit,
          record: () =>
            Promise.reject(new Error("a successful single-target action must not use audit.record")),
        },
      };
      const soniq = await app(broken);
      const tag = uniqueName("commit");
      const expected = await singleTargetActions(soniq, tag);
      expect((await rowsOf(soniq, (r) => r.actor.startsWith(tag))).map(row)).toEqual(expected);
    });

    it("audit/every-operator-action: each audited action through the public API leaves exactly one row with the actor given", async () => {
      const soniq = await app();
      const tag = uniqueName("every");
      await singleTargetActions(soniq, tag);
      const bulk = uniqueName("bulk");
      await deadLetters(soniq, bulk, 2);
      await soniq.deadLetters.replayWhere({ queue: bulk }, { actor: `${tag}-replay_where` });
      await soniq.deadLetters.purgeWhere({ queue: bulk }, { actor: `${tag}-purge_where` });
      // An upgrade is one row for the whole call, with the counts (here: nothing was outdated).
      soniq.job(`audit.versioned_${bulk}`, async () => {}, {
        queue: bulk,
        version: 2,
        upcast: { 1: (a) => a },
      });
      await soniq.jobs.upgrade(`audit.versioned_${bulk}`, { actor: `${tag}-upgrade` });
      // A test ping changes nothing, so its row is written on its own, with the outcome.
      const r = await receiver();
      receivers.push(r);
      const endpoint = await soniq.webhooks.register({ url: r.url, events: ["job.failed"], secret: SECRET });
      expect(await soniq.webhooks.test(endpoint.id, { actor: `${tag}-wtest` })).toMatchObject({
        ok: true,
        status: 200,
      });
      // Typed by AUDIT_ACTIONS: a new action fails typecheck here until it is performed above.
      const actors: Record<AuditAction, string> = {
        "job.cancel": "cancel",
        "job.signal": "signal",
        "job.upgrade": "upgrade",
        "dead_letter.replay": "replay",
        "dead_letter.purge": "purge",
        "dead_letter.replay_where": "replay_where",
        "dead_letter.purge_where": "purge_where",
        "queue.pause": "qpause",
        "queue.resume": "qresume",
        "queue.configure": "qconfigure",
        "schedule.pause": "spause",
        "schedule.resume": "sresume",
        "schedule.remove": "sremove",
        "schedule.trigger": "trigger",
        "flow.cancel": "fcancel",
        "webhook.register": "wregister",
        "webhook.update": "wupdate",
        "webhook.remove": "wremove",
        "webhook.test": "wtest",
        "webhook.redeliver": "wredeliver",
        "webhook.reseal": "wreseal",
      };
      const rows = await rowsOf(soniq, (r) => r.actor.startsWith(tag));
      expect(rows).toHaveLength(AUDIT_ACTIONS.length);
      for (const action of AUDIT_ACTIONS) {
        const of = rows.filter((r) => r.action === action);
        expect(
          of.map((r) => [r.actor, r.outcome]),
          action,
        ).toEqual([[`${tag}-${actors[action]}`, "ok"]]);
      }
      const bulkRows = rows.filter((r) => r.action.endsWith("_where"));
      for (const r of bulkRows) {
        expect(r.params).toMatchObject({ queue: bulk, dryRun: false });
        expect(r.details).toEqual({ count: expect.any(Number) });
      }
    });
  },
);
