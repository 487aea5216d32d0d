/**
 * `/api/flows`: the list (`?state=`, `?name=`, `?limit=`), one flow with its steps, and the two writes:
 * cancel (audited `flow.cancel` by core) and the replay of a held flow's dead-lettered parent (audited
 * `dead_letter.replay`), both with the key's label as actor. An unknown flow or step is a 404; a finished
 * flow or a step that is not dead-lettered is a 409.
 */
import type { Soniq } from "@soniq/core";
import { Hono } from "hono";
import type { Env } from "../context.js";
import { cancelFlow, flowDetail, flowId, flowQuery, listFlows, replayStep } from "../data/flows.js";
import { notFound } from "../errors.js";
import { parseLimit } from "../query.js";
import { actor } from "./helpers.js";

const STEP_REF = /^[A-Za-z0-9_.:-]{1,128}$/;

function stepRef(raw: string | undefined): string {
  if (raw === undefined || !STEP_REF.test(raw)) throw notFound("No step with this ref.");
  return raw;
}

export function flowRoutes(soniq: Soniq): Hono<Env> {
  const api = new Hono<Env>();
  api.get("/", async (c) => {
    const p = c.req.query();
    return c.json({ flows: await listFlows(soniq, flowQuery(p, parseLimit(p.limit))) });
  });
  api.get("/:id", async (c) => c.json({ flow: await flowDetail(soniq, flowId(c.req.param("id"))) }));
  api.post("/:id/cancel", async (c) => {
    const flow = await cancelFlow(soniq, flowId(c.req.param("id")), actor(c));
    return c.json({ cancelled: true, flow });
  });
  api.post("/:id/steps/:ref/replay", async (c) => {
    const id = flowId(c.req.param("id"));
    const replayed = await replayStep(soniq, id, stepRef(c.req.param("ref")), actor(c));
    return c.json({ replayed: true, ...replayed });
  });
  return api;
}
