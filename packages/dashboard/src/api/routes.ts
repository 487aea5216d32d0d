/**
 * The JSON API under `/api` (DESIGN.md section 11). Reads answer 200 with an object; writes need a
 * write key (see auth.ts). Features core lacks answer 501 `not_available`.
 */
import type { Soniq } from "@soniq/core";
import type { Context } from "hono";
import { Hono } from "hono";
import type { AppState, Env } from "../context.js";
import {
  actOnOne,
  bulkDeadLetters,
  deadLetterDetail,
  listDeadLettersPage,
  parseBulkBody,
} from "../data/dead-letters.js";
import { jobDetail, listJobsPage } from "../data/jobs.js";
import { listQueues, metricsSeries, statsSummary } from "../data/overview.js";
import { listWorkerRows } from "../data/workers.js";
import { badRequest, DashboardError, notAvailable, notFound } from "../errors.js";
import { decodeCursor } from "../paging.js";
import {
  parseDurationMs,
  parseId,
  parseInstant,
  parseLimit,
  parseQueue,
  parseText,
  readJsonBody,
} from "../query.js";
import { deadLetterQuery, deadLetterQueryFromBody, jobQuery } from "./filters.js";
import { actor, actorCall, queueName } from "./helpers.js";
import { scheduleRoutes } from "./schedules.js";

function parseBucketMs(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const ms = /^\d{1,10}$/.test(raw) ? Number(raw) : parseDurationMs(raw);
  if (ms === null || ms < 60_000 || ms > 7 * 86_400_000 || ms % 60_000 !== 0) {
    throw badRequest("bucketMs must be whole minutes between 60000 (1 min) and 604800000 (7 d)");
  }
  return ms;
}

function configureBody(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const intOrNull = (key: string) => {
    const v = body[key];
    if (v === undefined) return;
    if (v !== null && (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1_000_000)) {
      throw badRequest(`${key} must be a positive integer or null (null clears the limit)`);
    }
    out[key] = v;
  };
  intOrNull("concurrency");
  intOrNull("groupConcurrency");
  if (body.rateLimit !== undefined) {
    const r = body.rateLimit as { max?: unknown; perMs?: unknown } | null;
    const ok = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 1;
    if (r !== null && (typeof r !== "object" || !ok(r.max) || !ok(r.perMs))) {
      throw badRequest("rateLimit must be { max, perMs } with positive integers, or null");
    }
    out.rateLimit = r === null ? null : { max: r.max, perMs: r.perMs };
  }
  const unknown = Object.keys(body).filter(
    (k) => !["concurrency", "groupConcurrency", "rateLimit"].includes(k),
  );
  if (unknown.length > 0) throw badRequest(`Unknown configure keys: ${unknown.join(", ")}`);
  if (Object.keys(out).length === 0)
    throw badRequest("configure needs concurrency, groupConcurrency or rateLimit");
  return out;
}

function readRoutes(api: Hono<Env>, state: AppState): void {
  const { soniq, staleAfterMs } = state.options;
  const workers = (c: Context<Env>) => () =>
    listWorkerRows(c.get("features"), staleAfterMs).then((r) => r.workers);

  api.get("/stats", async (c) => c.json(await statsSummary(soniq, c.get("features"))));
  api.get("/queues", async (c) => c.json(await listQueues(soniq, c.get("features"), workers(c))));
  api.get("/jobs", async (c) => {
    const page = await listJobsPage(soniq, jobQuery(c.req.query()));
    return c.json({
      jobs: page.items,
      nextCursor: page.nextCursor,
      prevCursor: page.prevCursor,
      scanned: page.scanned,
      truncated: page.truncated,
    });
  });
  api.get("/jobs/:id", async (c) =>
    c.json(await jobDetail(soniq, c.get("features"), parseId(c.req.param("id")))),
  );
  api.get("/dead-letters", async (c) => {
    const p = c.req.query();
    const page = await listDeadLettersPage(soniq, {
      ...deadLetterQuery(p),
      limit: parseLimit(p.limit),
      cursor: decodeCursor(p.cursor),
    });
    return c.json({
      deadLetters: page.items,
      nextCursor: page.nextCursor,
      prevCursor: page.prevCursor,
      scanned: page.scanned,
      truncated: page.truncated,
    });
  });
  api.get("/dead-letters/:id", async (c) =>
    c.json({ deadLetter: await deadLetterDetail(soniq, parseId(c.req.param("id"), "dead-letter job")) }),
  );
  api.get("/workers", async (c) => c.json(await listWorkerRows(c.get("features"), staleAfterMs)));
  api.get("/audit", async (c) => {
    const p = c.req.query();
    const filter = {
      limit: parseLimit(p.limit),
      ...(p.action ? { action: parseText(p.action, "action", 64) } : {}),
      ...(p.since ? { since: parseInstant(p.since, "since") } : {}),
    };
    const audit = c.get("features").audit;
    if (!audit) throw notAvailable("The audit log (soniq.audit)");
    const entries = await audit.list(filter);
    return c.json({ entries: Array.isArray(entries) ? entries : [] });
  });
  api.get("/metrics", async (c) => {
    const p = c.req.query();
    const since = parseInstant(p.since ?? "1h", "since") as Date;
    const bucketMs = parseBucketMs(p.bucketMs, 60_000);
    return c.json(await metricsSeries(c.get("features"), { since, bucketMs, queue: parseQueue(p.queue) }));
  });
}

function writeRoutes(api: Hono<Env>, soniq: Soniq): void {
  api.post("/jobs/:id/cancel", async (c) => {
    const id = parseId(c.req.param("id"));
    const job = await soniq.getJob(id);
    if (!job) throw notFound(`No job with id ${id}.`);
    const cancelled = (await actorCall(soniq, soniq.cancelJob, id, actor(c))) === true;
    if (!cancelled) {
      throw new DashboardError(
        "conflict",
        `Job ${id} is ${job.status}; only queued or processing jobs can be cancelled.`,
      );
    }
    return c.json({ cancelled: true, job: await soniq.getJob(id) });
  });
  api.post("/dead-letters/replay-where", async (c) => {
    const req = parseBulkBody(await readJsonBody(c.req.raw), deadLetterQueryFromBody);
    return c.json(await bulkDeadLetters(soniq, c.get("features"), c.get("principal"), "replay", req));
  });
  api.post("/dead-letters/purge-where", async (c) => {
    const req = parseBulkBody(await readJsonBody(c.req.raw), deadLetterQueryFromBody);
    return c.json(await bulkDeadLetters(soniq, c.get("features"), c.get("principal"), "purge", req));
  });
  api.post("/dead-letters/:id/replay", async (c) => {
    const id = parseId(c.req.param("id"), "dead-letter job");
    await deadLetterDetail(soniq, id);
    const jobId = await actorCallReplay(soniq, id, actor(c));
    if (jobId === null) throw notFound(`No dead-letter job with id ${id}.`);
    return c.json({ replayed: true, jobId });
  });
  api.post("/dead-letters/:id/purge", async (c) => {
    const id = parseId(c.req.param("id"), "dead-letter job");
    if (!(await actOnOne(soniq, "purge", id, actor(c)))) throw notFound(`No dead-letter job with id ${id}.`);
    return c.json({ purged: true });
  });
}

function queueRoutes(api: Hono<Env>): void {
  for (const action of ["pause", "resume", "configure"] as const) {
    api.post(`/queues/:name/${action}`, async (c) => {
      const name = queueName(c.req.param("name"));
      const settings = action === "configure" ? configureBody(await readJsonBody(c.req.raw)) : null;
      const queues = c.get("features").queues;
      const method = queues?.[action];
      if (!queues || !method) throw notAvailable(`Queue ${action} (soniq.queues.${action})`);
      // ?create=true acts on a queue nothing knows yet; without it core refuses the name (404).
      const create = createParam(c.req.query("create"));
      if (settings) {
        const call = method as unknown as (q: string, s: object, o?: object) => Promise<unknown>;
        const options = { ...actor(c), ...create };
        await (Object.keys(options).length > 0
          ? call.call(queues, name, settings, options)
          : call.call(queues, name, settings));
      } else {
        await actorCall(queues, method, name, actor(c), create);
      }
      return c.json({ ok: true, queue: name, action });
    });
  }
}

/** `?create=true` (or absent / `false`); anything else is 400. */
function createParam(raw: string | undefined): { create: true } | undefined {
  if (raw === undefined || raw === "false") return undefined;
  if (raw === "true") return { create: true };
  throw badRequest('create takes "true" or "false".');
}

export function apiRoutes(state: AppState): Hono<Env> {
  const api = new Hono<Env>();
  readRoutes(api, state);
  writeRoutes(api, state.options.soniq);
  queueRoutes(api);
  api.route("/schedules", scheduleRoutes());
  return api;
}

async function actorCallReplay(
  soniq: AppState["options"]["soniq"],
  id: string,
  a: { actor: string } | undefined,
): Promise<string | null> {
  const result = await actorCall(soniq.deadLetter, soniq.deadLetter.replay, id, a);
  return typeof result === "string" ? result : null;
}
