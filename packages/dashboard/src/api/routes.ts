/**
 * The JSON API under `/api` (DESIGN.md section 11), over the app API of the Soniq instance it was given.
 * Reads answer 200 with an object; writes need a write key (see auth.ts). Core validates what it is
 * passed; its input errors answer 400 (errors.ts).
 */
import type { AuditAction, AuditListFilter, Soniq } from "@soniq/core";
import { shownRows } from "@soniq/core/ops";
import { Hono } from "hono";
import type { AppState, Env } from "../context.js";
import {
  bulkDeadLetters,
  deadLetterDetail,
  deadLetterWithSteps,
  listDeadLettersPage,
  parseBulkBody,
} from "../data/dead-letters.js";
import { jobDetail, listJobsPage } from "../data/jobs.js";
import { listQueues, metricsSeries, statsSummary } from "../data/overview.js";
import { parseReplayBody, parseSignalBody, replayDeadLetter, sendSignal } from "../data/steps.js";
import { listWorkers } from "../data/workers.js";
import { badRequest, DashboardError, notFound } from "../errors.js";
import { decodeCursor } from "../paging.js";
import { parseDurationMs, parseId, parseInstant, parseLimit, parseQueue, parseText } from "../query.js";
import { deadLetterListRow, jobListRow, shownDeadLetter, shownDetail } from "../security/views.js";
import { deadLetterQuery, deadLetterQueryFromBody, jobQuery } from "./filters.js";
import { flowRoutes } from "./flows.js";
import { actor, queueName } from "./helpers.js";
import { scheduleRoutes } from "./schedules.js";
import { webhookRoutes } from "./webhooks.js";

/** A bucket width in ms or as a duration ("15m"); core checks that it is whole minutes. */
function parseBucketMs(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const ms = /^\d{1,15}$/.test(raw) ? Number(raw) : parseDurationMs(raw);
  if (ms === null || ms < 1) {
    throw badRequest('bucketMs must be whole minutes, in ms or as a duration like "15m"');
  }
  return ms;
}

function readRoutes(api: Hono<Env>, state: AppState): void {
  const { soniq } = state.options;
  const redact = soniq.options.redact;

  api.get("/stats", async (c) => c.json(await statsSummary(soniq)));
  api.get("/queues", async (c) => c.json({ queues: await listQueues(soniq) }));
  api.get("/jobs", async (c) => {
    const page = await listJobsPage(soniq, jobQuery(c.req.query()));
    return c.json({
      jobs: (await shownRows(soniq, page.items)).map(jobListRow),
      nextCursor: page.nextCursor,
      prevCursor: page.prevCursor,
    });
  });
  api.get("/jobs/:id", async (c) =>
    c.json(shownDetail(redact, await jobDetail(soniq, parseId(c.req.param("id"))))),
  );
  api.get("/dead-letters", async (c) => {
    const p = c.req.query();
    const page = await listDeadLettersPage(soniq, {
      ...deadLetterQuery(p),
      limit: parseLimit(p.limit),
      cursor: decodeCursor(p.cursor),
    });
    return c.json({
      deadLetters: (await shownRows(soniq, page.items)).map(deadLetterListRow),
      nextCursor: page.nextCursor,
      prevCursor: page.prevCursor,
    });
  });
  api.get("/dead-letters/:id", async (c) => {
    const { deadLetter, steps } = await deadLetterWithSteps(
      soniq,
      parseId(c.req.param("id"), "dead-letter job"),
    );
    return c.json(shownDeadLetter(redact, deadLetter, steps));
  });
  api.get("/workers", async (c) => c.json({ workers: await listWorkers(state.options) }));
  api.get("/audit", async (c) => {
    const p = c.req.query();
    const filter: AuditListFilter = {
      limit: parseLimit(p.limit),
      // core checks the action against its list (an unknown one is a 400)
      ...(p.action ? { action: parseText(p.action, "action", 64) as AuditAction } : {}),
      ...(p.since ? { since: parseInstant(p.since, "since") } : {}),
    };
    return c.json({ entries: await soniq.audit.list(filter) });
  });
  api.get("/metrics", async (c) => {
    const p = c.req.query();
    const since = parseInstant(p.since ?? "1h", "since") as Date;
    const bucketMs = parseBucketMs(p.bucketMs, 60_000);
    return c.json(await metricsSeries(soniq, { since, bucketMs, queue: parseQueue(p.queue) }));
  });
}

function writeRoutes(api: Hono<Env>, soniq: Soniq): void {
  api.post("/jobs/:id/cancel", async (c) => {
    const id = parseId(c.req.param("id"));
    const job = await soniq.jobs.get(id);
    if (!job) throw notFound(`No job with id ${id}.`);
    const cancelled = await soniq.jobs.cancel(id, actor(c));
    if (!cancelled) {
      throw new DashboardError(
        "conflict",
        `Job ${id} is ${job.status}; only queued or processing jobs can be cancelled.`,
      );
    }
    const after = await soniq.jobs.get(id);
    return c.json({ cancelled: true, job: after && soniq.options.redact.row(after) });
  });
  api.post("/dead-letters/replay-where", async (c) => {
    const req = parseBulkBody(c.get("body"), deadLetterQueryFromBody);
    return c.json(await bulkDeadLetters(soniq, c.get("principal"), "replay", req));
  });
  api.post("/dead-letters/purge-where", async (c) => {
    const req = parseBulkBody(c.get("body"), deadLetterQueryFromBody);
    return c.json(await bulkDeadLetters(soniq, c.get("principal"), "purge", req));
  });
  api.post("/jobs/:id/signal", async (c) => {
    const id = parseId(c.req.param("id"));
    const signal = parseSignalBody(c.get("body"));
    return c.json(await sendSignal(soniq, c.get("principal"), id, signal));
  });
  api.post("/dead-letters/:id/replay", async (c) => {
    const id = parseId(c.req.param("id"), "dead-letter job");
    const options = parseReplayBody(c.get("body"));
    await deadLetterDetail(soniq, id);
    const jobId = await replayDeadLetter(soniq, c.get("principal"), id, options);
    if (jobId === null) throw notFound(`No dead-letter job with id ${id}.`);
    return c.json({ replayed: true, jobId });
  });
  api.post("/dead-letters/:id/purge", async (c) => {
    const id = parseId(c.req.param("id"), "dead-letter job");
    if (!(await soniq.deadLetters.purge(id, actor(c)))) throw notFound(`No dead-letter job with id ${id}.`);
    return c.json({ purged: true });
  });
}

/**
 * Pause, resume and configure pass straight to `soniq.queues` (core validates the limits). `?create=true`
 * acts on a queue nothing knows yet; without it core refuses the name (404).
 */
function queueRoutes(api: Hono<Env>, soniq: Soniq): void {
  api.post("/queues/:name/pause", async (c) => {
    const name = queueName(c.req.param("name"));
    await soniq.queues.pause(name, { ...actor(c), ...createParam(c.req.query("create")) });
    return c.json({ ok: true, queue: name, action: "pause" });
  });
  api.post("/queues/:name/resume", async (c) => {
    const name = queueName(c.req.param("name"));
    await soniq.queues.resume(name, { ...actor(c), ...createParam(c.req.query("create")) });
    return c.json({ ok: true, queue: name, action: "resume" });
  });
  api.post("/queues/:name/configure", async (c) => {
    const name = queueName(c.req.param("name"));
    const options = { ...actor(c), ...createParam(c.req.query("create")) };
    await soniq.queues.configure(name, c.get("body"), options);
    return c.json({ ok: true, queue: name, action: "configure" });
  });
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
  queueRoutes(api, state.options.soniq);
  api.route("/flows", flowRoutes(state.options.soniq));
  api.route("/schedules", scheduleRoutes(state.options.soniq, state.options.soniq.options.redact));
  api.route("/", webhookRoutes(state.options.soniq));
  return api;
}
