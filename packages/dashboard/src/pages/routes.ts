/** The HTML pages. Each reads through the same data functions as the JSON API. */

import { shortId } from "@soniq/core";
import type { Context } from "hono";
import { Hono } from "hono";
import { deadLetterQuery, jobQuery } from "../api/filters.js";
import { scheduleName } from "../api/helpers.js";
import { scheduleDetail } from "../api/schedules.js";
import type { AppState, Env } from "../context.js";
import { deadLetterDetail, listDeadLettersPage } from "../data/dead-letters.js";
import { jobDetail, listJobsPage } from "../data/jobs.js";
import { listQueues, RANGES, type RangeName } from "../data/overview.js";
import { listWorkerRows, type WorkerRow } from "../data/workers.js";
import { DashboardError } from "../errors.js";
import type { AuditEntry, ScheduleInfo } from "../features.js";
import type { Html } from "../html.js";
import { decodeCursor } from "../paging.js";
import { parseId, parseLimit } from "../query.js";
import { deadLetterDetailPage, deadLettersPage } from "./dead-letters.js";
import { jobDetailPage, jobsPage } from "./jobs.js";
import { layout, notAvailablePanel, type PageFrame } from "./layout.js";
import { auditPage, queuesPage, scheduleDetailPage, schedulesPage, workersPage } from "./operations.js";
import { overviewPage } from "./overview.js";

interface PageKit {
  frame(c: Context<Env>): PageFrame;
  send(c: Context<Env>, title: string, active: string, body: Html, status?: 200 | 400): Response;
  workers(c: Context<Env>): () => Promise<WorkerRow[]>;
  /** The message of a 400 (shown on the page), rethrowing anything else. */
  badInput(err: unknown): string;
}

function pageKit(state: AppState): PageKit {
  const { staleAfterMs, basePath, refreshIntervalMs } = state.options;
  const frame = (c: Context<Env>): PageFrame => ({
    base: basePath,
    principal: c.get("principal"),
    keysConfigured: state.auth.enabled,
    refreshMs: refreshIntervalMs,
  });
  return {
    frame,
    send: (c, title, active, body, status = 200) =>
      c.html(layout(frame(c), { title, active, body }).value, status),
    workers: (c) => () => listWorkerRows(c.get("features"), staleAfterMs).then((r) => r.workers),
    badInput: (err) => {
      if (err instanceof DashboardError && err.status === 400) return err.message;
      throw err;
    },
  };
}

function jobPages(pages: Hono<Env>, state: AppState, kit: PageKit): void {
  const { soniq, basePath } = state.options;
  const { frame, send, workers, badInput } = kit;
  pages.get("/", async (c) => {
    const r = c.req.query("range");
    const range: RangeName = r && r in RANGES ? (r as RangeName) : "1h";
    return send(c, "Overview", "", await overviewPage(soniq, c.get("features"), basePath, range, workers(c)));
  });
  pages.get("/jobs", async (c) => {
    const params = c.req.query();
    try {
      const query = jobQuery(params);
      return send(
        c,
        "Jobs",
        "/jobs",
        jobsPage(frame(c), params, query, await listJobsPage(soniq, query), null),
      );
    } catch (err) {
      return send(c, "Jobs", "/jobs", jobsPage(frame(c), params, null, null, badInput(err)), 400);
    }
  });
  pages.get("/jobs/:id", async (c) => {
    const id = parseId(c.req.param("id"));
    try {
      const detail = await jobDetail(soniq, c.get("features"), id);
      return send(
        c,
        `Job ${shortId(id)}`,
        "/jobs",
        jobDetailPage(frame(c), detail, c.get("features").explain !== null),
      );
    } catch (err) {
      if (err instanceof DashboardError && err.status === 404 && (await soniq.deadLetter.get(id))) {
        return c.redirect(`${basePath}/dead-letters/${id}`, 303);
      }
      throw err;
    }
  });
  pages.get("/dead-letters", async (c) => {
    const p = c.req.query();
    try {
      const page = await listDeadLettersPage(soniq, {
        ...deadLetterQuery(p),
        limit: parseLimit(p.limit),
        cursor: decodeCursor(p.cursor),
      });
      return send(c, "Dead letters", "/dead-letters", deadLettersPage(frame(c), p, page, null));
    } catch (err) {
      return send(c, "Dead letters", "/dead-letters", deadLettersPage(frame(c), p, null, badInput(err)), 400);
    }
  });
  pages.get("/dead-letters/:id", async (c) => {
    const row = await deadLetterDetail(soniq, parseId(c.req.param("id"), "dead-letter job"));
    return send(c, `Dead letter ${shortId(row.id)}`, "/dead-letters", deadLetterDetailPage(frame(c), row));
  });
}

function operationPages(pages: Hono<Env>, state: AppState, kit: PageKit): void {
  const { soniq, staleAfterMs } = state.options;
  const { frame, send, workers } = kit;
  pages.get("/workers", async (c) => {
    const features = c.get("features");
    const result = features.workers ? await listWorkerRows(features, staleAfterMs) : null;
    return send(c, "Workers", "/workers", workersPage(frame(c), result));
  });
  pages.get("/queues", async (c) => {
    const features = c.get("features");
    const result = await listQueues(soniq, features, workers(c));
    return send(c, "Queues", "/queues", queuesPage(frame(c), result, features.queues?.configure != null));
  });
  pages.get("/schedules", async (c) => {
    const schedules = c.get("features").schedules;
    const list = schedules ? await schedules.list() : null;
    const rows = list === null ? null : Array.isArray(list) ? (list as ScheduleInfo[]) : [];
    return send(c, "Schedules", "/schedules", schedulesPage(frame(c), rows));
  });
  pages.get("/schedules/:name", async (c) => {
    const schedules = c.get("features").schedules;
    if (!schedules) {
      return send(
        c,
        "Schedules",
        "/schedules",
        notAvailablePanel("Schedules", "soniq.schedules is not in this core yet."),
      );
    }
    const detail = await scheduleDetail(schedules, scheduleName(c.req.param("name")));
    return send(c, "Schedule", "/schedules", scheduleDetailPage(frame(c), detail));
  });
  pages.get("/audit", async (c) => {
    const audit = c.get("features").audit;
    const entries = audit ? await audit.list({ limit: 200 }) : null;
    const rows = entries === null ? null : Array.isArray(entries) ? (entries as AuditEntry[]) : [];
    return send(c, "Audit log", "/audit", auditPage(frame(c), rows));
  });
}

export function pageRoutes(state: AppState): Hono<Env> {
  const pages = new Hono<Env>();
  const kit = pageKit(state);
  jobPages(pages, state, kit);
  operationPages(pages, state, kit);
  return pages;
}
