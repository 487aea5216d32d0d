/** The HTML pages. Each reads through the same data functions as the JSON API. */

import { shortId } from "@soniq/core/ops";
import type { Context } from "hono";
import { Hono } from "hono";
import { deadLetterQuery, jobQuery } from "../api/filters.js";
import { scheduleName } from "../api/helpers.js";
import { scheduleDetail } from "../api/schedules.js";
import { deliveryDetail, deliveryFilter, endpointDetail } from "../api/webhooks.js";
import type { AppState, Env } from "../context.js";
import { deadLetterWithSteps, listDeadLettersPage } from "../data/dead-letters.js";
import { flowDetail, flowId, flowQuery, listFlows } from "../data/flows.js";
import { jobDetail, listJobsPage } from "../data/jobs.js";
import { listQueues, RANGES, type RangeName } from "../data/overview.js";
import { listWorkers } from "../data/workers.js";
import { DashboardError } from "../errors.js";
import type { Html } from "../html.js";
import { decodeCursor } from "../paging.js";
import { parseId, parseLimit } from "../query.js";
import {
  deliveryListRow,
  shownDeadLetter,
  shownDetail,
  shownEndpoint,
  shownPage,
  shownScheduleDetail,
} from "../security/views.js";
import { deadLetterDetailPage, deadLettersPage } from "./dead-letters.js";
import { flowDetailPage, flowsPage } from "./flows.js";
import { jobDetailPage, jobsPage } from "./jobs.js";
import { layout, type PageFrame } from "./layout.js";
import { auditPage, queuesPage, scheduleDetailPage, schedulesPage, workersPage } from "./operations.js";
import { overviewPage } from "./overview.js";
import { deliveriesPage, deliveryDetailPage, endpointDetailPage, endpointsPage } from "./webhooks.js";

interface PageKit {
  frame(c: Context<Env>): PageFrame;
  send(c: Context<Env>, title: string, active: string, body: Html, status?: 200 | 400): Response;
  /** The message of a 400 (shown on the page), rethrowing anything else. */
  badInput(err: unknown): string;
}

function pageKit(state: AppState): PageKit {
  const { basePath, refreshIntervalMs } = state.options;
  const frame = (c: Context<Env>): PageFrame => ({
    base: basePath,
    principal: c.get("principal"),
    keysConfigured: state.auth.enabled,
    refreshMs: refreshIntervalMs,
    redacting: state.options.soniq.options.redact.active,
  });
  return {
    frame,
    send: (c, title, active, body, status = 200) =>
      c.html(layout(frame(c), { title, active, body }).value, status),
    badInput: (err) => {
      if (err instanceof DashboardError && err.status === 400) return err.message;
      throw err;
    },
  };
}

function jobPages(pages: Hono<Env>, state: AppState, kit: PageKit): void {
  const { soniq, basePath } = state.options;
  const redact = soniq.options.redact;
  const { frame, send, badInput } = kit;
  pages.get("/", async (c) => {
    const r = c.req.query("range");
    const range: RangeName = r && r in RANGES ? (r as RangeName) : "1h";
    return send(c, "Overview", "", await overviewPage(state.options, range));
  });
  pages.get("/jobs", async (c) => {
    const params = c.req.query();
    try {
      const query = jobQuery(params);
      return send(
        c,
        "Jobs",
        "/jobs",
        jobsPage(frame(c), params, query, await shownPage(soniq, await listJobsPage(soniq, query)), null),
      );
    } catch (err) {
      return send(c, "Jobs", "/jobs", jobsPage(frame(c), params, null, null, badInput(err)), 400);
    }
  });
  pages.get("/jobs/:id", async (c) => {
    const id = parseId(c.req.param("id"));
    try {
      const detail = shownDetail(redact, await jobDetail(soniq, id));
      return send(c, `Job ${shortId(id)}`, "/jobs", jobDetailPage(frame(c), detail, state.options.traceUrl));
    } catch (err) {
      if (err instanceof DashboardError && err.status === 404 && (await soniq.deadLetters.get(id))) {
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
      const shown = await shownPage(soniq, page);
      return send(c, "Dead letters", "/dead-letters", deadLettersPage(frame(c), p, shown, null));
    } catch (err) {
      return send(c, "Dead letters", "/dead-letters", deadLettersPage(frame(c), p, null, badInput(err)), 400);
    }
  });
  pages.get("/dead-letters/:id", async (c) => {
    const read = await deadLetterWithSteps(soniq, parseId(c.req.param("id"), "dead-letter job"));
    const { deadLetter, steps } = shownDeadLetter(redact, read.deadLetter, read.steps);
    return send(
      c,
      `Dead letter ${shortId(deadLetter.id)}`,
      "/dead-letters",
      deadLetterDetailPage(frame(c), deadLetter, steps),
    );
  });
}

function flowPages(pages: Hono<Env>, state: AppState, kit: PageKit): void {
  const { soniq } = state.options;
  const { frame, send, badInput } = kit;
  pages.get("/flows", async (c) => {
    const p = c.req.query();
    try {
      const flows = await listFlows(soniq, flowQuery(p, 100));
      return send(c, "Flows", "/flows", flowsPage(frame(c), p, flows, null));
    } catch (err) {
      return send(c, "Flows", "/flows", flowsPage(frame(c), p, null, badInput(err)), 400);
    }
  });
  pages.get("/flows/:id", async (c) => {
    const flow = await flowDetail(soniq, flowId(c.req.param("id")));
    return send(c, `Flow ${shortId(flow.id)}`, "/flows", flowDetailPage(frame(c), flow));
  });
}

function operationPages(pages: Hono<Env>, state: AppState, kit: PageKit): void {
  const { soniq } = state.options;
  const { frame, send } = kit;
  pages.get("/workers", async (c) =>
    send(c, "Workers", "/workers", workersPage(frame(c), await listWorkers(state.options))),
  );
  pages.get("/queues", async (c) =>
    send(c, "Queues", "/queues", queuesPage(frame(c), await listQueues(soniq))),
  );
  pages.get("/schedules", async (c) =>
    send(c, "Schedules", "/schedules", schedulesPage(frame(c), await soniq.schedules.list())),
  );
  pages.get("/schedules/:name", async (c) => {
    const detail = shownScheduleDetail(
      soniq.options.redact,
      await scheduleDetail(soniq, scheduleName(c.req.param("name"))),
    );
    return send(c, "Schedule", "/schedules", scheduleDetailPage(frame(c), detail));
  });
  pages.get("/audit", async (c) =>
    send(c, "Audit log", "/audit", auditPage(frame(c), await soniq.audit.list({ limit: 200 }))),
  );
}

function webhookPages(pages: Hono<Env>, state: AppState, kit: PageKit): void {
  const { soniq } = state.options;
  const { frame, send, badInput } = kit;
  pages.get("/webhooks", async (c) => {
    const endpoints = (await soniq.webhooks.list()).map(shownEndpoint);
    return send(c, "Webhooks", "/webhooks", endpointsPage(frame(c), endpoints));
  });
  pages.get("/webhooks/:id", async (c) => {
    const detail = await endpointDetail(soniq, c.req.param("id"));
    return send(
      c,
      `Webhook ${shortId(detail.endpoint.id)}`,
      "/webhooks",
      endpointDetailPage(frame(c), detail),
    );
  });
  pages.get("/webhook-deliveries", async (c) => {
    const p = c.req.query();
    try {
      const rows = (await soniq.webhooks.deliveries(deliveryFilter(p))).map(deliveryListRow);
      return send(c, "Webhook deliveries", "/webhooks", deliveriesPage(frame(c), p, rows, null));
    } catch (err) {
      return send(
        c,
        "Webhook deliveries",
        "/webhooks",
        deliveriesPage(frame(c), p, null, badInput(err)),
        400,
      );
    }
  });
  pages.get("/webhook-deliveries/:id", async (c) => {
    const delivery = await deliveryDetail(soniq, c.req.param("id"));
    return send(c, `Delivery ${shortId(delivery.id)}`, "/webhooks", deliveryDetailPage(frame(c), delivery));
  });
}

export function pageRoutes(state: AppState): Hono<Env> {
  const pages = new Hono<Env>();
  const kit = pageKit(state);
  jobPages(pages, state, kit);
  flowPages(pages, state, kit);
  operationPages(pages, state, kit);
  webhookPages(pages, state, kit);
  return pages;
}
