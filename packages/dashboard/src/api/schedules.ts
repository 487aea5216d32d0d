/**
 * `/api/schedules`: list, one schedule with its next fires and tick ledger, and pause/resume/trigger, over
 * core's `soniq.schedules` (list/get/upcoming/history/pause/resume/trigger). Only stored schedules are
 * shown (a `periodic()` declaration is stored when a scheduler starts); an unknown name is a 404.
 */

import type { Redactor } from "@soniq/core";
import type { Context } from "hono";
import { Hono } from "hono";
import type { Env } from "../context.js";
import { notAvailable, notFound } from "../errors.js";
import type { Features } from "../features.js";
import { parseLimit } from "../query.js";
import { scheduleListRow, shownScheduleDetail } from "../security/views.js";
import { actor, actorCall, scheduleName } from "./helpers.js";

function schedulesOf(c: Context<Env>): NonNullable<Features["schedules"]> {
  const schedules = c.get("features").schedules;
  if (!schedules) throw notAvailable("Schedules (soniq.schedules)");
  return schedules;
}

export async function scheduleDetail(
  schedules: NonNullable<Features["schedules"]>,
  name: string,
  historyLimit = 50,
) {
  if (!schedules.get) throw notAvailable("Schedule details (soniq.schedules.get)");
  const schedule = await schedules.get(name);
  if (!schedule) throw notFound(`No schedule named ${name}.`);
  const [upcoming, history] = await Promise.all([
    schedules.upcoming ? schedules.upcoming(name, 5) : Promise.resolve([]),
    schedules.history ? schedules.history(name, { limit: historyLimit }) : Promise.resolve([]),
  ]);
  return {
    schedule,
    upcoming: Array.isArray(upcoming) ? upcoming : [],
    history: Array.isArray(history) ? history : [],
  };
}

export function scheduleRoutes(redact: Redactor): Hono<Env> {
  const r = new Hono<Env>();
  r.get("/", async (c) => {
    const list = await schedulesOf(c).list();
    return c.json({ schedules: Array.isArray(list) ? list.map(scheduleListRow) : [] });
  });
  r.get("/:name", async (c) => {
    const limit = parseLimit(c.req.query("limit"), 50);
    const name = scheduleName(c.req.param("name"));
    return c.json(shownScheduleDetail(redact, await scheduleDetail(schedulesOf(c), name, limit)));
  });
  for (const action of ["pause", "resume", "trigger"] as const) {
    r.post(`/:name/${action}`, async (c) => {
      const name = scheduleName(c.req.param("name"));
      const schedules = schedulesOf(c);
      const method = schedules[action];
      if (!method) throw notAvailable(`Schedule ${action} (soniq.schedules.${action})`);
      if (schedules.get && !(await schedules.get(name))) throw notFound(`No schedule named ${name}.`);
      const result = await actorCall(schedules, method, name, actor(c));
      // pause/resume answer false when the schedule is gone (removed between the check and the write)
      if (result === false) throw notFound(`No schedule named ${name}.`);
      return c.json({
        ok: true,
        schedule: name,
        action,
        ...(action === "trigger" ? { jobId: result ?? null } : {}),
      });
    });
  }
  return r;
}
