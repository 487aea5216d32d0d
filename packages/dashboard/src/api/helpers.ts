/** Small pieces the route files share: the audit actor of a request, and names in paths. */
import { JOB_NAME_PATTERN } from "@soniq/core/ops";
import type { Context } from "hono";
import { actorOf } from "../auth.js";
import type { Env } from "../context.js";
import { notFound } from "../errors.js";
import { parseQueue } from "../query.js";

export function actor(c: Context<Env>): { actor: string } {
  return actorOf(c.get("principal"));
}

export function queueName(raw: string | undefined): string {
  try {
    const name = parseQueue(raw);
    if (name) return name;
  } catch {
    // a name that cannot exist names no queue
  }
  throw notFound("No queue with this name.");
}

export function scheduleName(raw: string | undefined): string {
  if (raw === undefined || raw.length > 255 || !JOB_NAME_PATTERN.test(raw))
    throw notFound("No schedule with this name.");
  return raw;
}
