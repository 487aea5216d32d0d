/**
 * `/api/schedules`: list, one schedule with its next fires and tick ledger, and pause/resume/trigger, over
 * `soniq.schedules`. Only stored schedules are shown (a `schedules.declare()` declaration is stored when a
 * scheduler starts); an unknown name is a 404.
 */

import type { Schedule, ScheduleTick, Soniq } from "@soniq/core";
import type { Redactor } from "@soniq/core/ops";
import { Hono } from "hono";
import type { Env } from "../context.js";
import { notFound } from "../errors.js";
import { parseLimit } from "../query.js";
import { scheduleListRow, shownScheduleDetail } from "../security/views.js";
import { actor, scheduleName } from "./helpers.js";

export interface ScheduleDetail {
  schedule: Schedule;
  upcoming: Date[];
  history: ScheduleTick[];
}

export async function scheduleDetail(soniq: Soniq, name: string, historyLimit = 50): Promise<ScheduleDetail> {
  const schedule = await soniq.schedules.get(name);
  if (!schedule) throw notFound(`No schedule named ${name}.`);
  const [upcoming, history] = await Promise.all([
    soniq.schedules.upcoming(name, 5),
    soniq.schedules.history(name, { limit: historyLimit }),
  ]);
  return { schedule, upcoming, history };
}

export function scheduleRoutes(soniq: Soniq, redact: Redactor): Hono<Env> {
  const r = new Hono<Env>();
  r.get("/", async (c) => c.json({ schedules: (await soniq.schedules.list()).map(scheduleListRow) }));
  r.get("/:name", async (c) => {
    const limit = parseLimit(c.req.query("limit"), 50);
    const name = scheduleName(c.req.param("name"));
    return c.json(shownScheduleDetail(redact, await scheduleDetail(soniq, name, limit)));
  });
  for (const action of ["pause", "resume", "trigger"] as const) {
    r.post(`/:name/${action}`, async (c) => {
      const name = scheduleName(c.req.param("name"));
      if (!(await soniq.schedules.get(name))) throw notFound(`No schedule named ${name}.`);
      const result = await soniq.schedules[action](name, actor(c));
      // pause/resume answer false when the schedule is gone (removed between the check and the write)
      if (result === false) throw notFound(`No schedule named ${name}.`);
      return c.json({
        ok: true,
        schedule: name,
        action,
        ...(action === "trigger" ? { jobId: result } : {}),
      });
    });
  }
  return r;
}
