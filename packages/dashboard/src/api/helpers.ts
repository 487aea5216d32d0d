/** Small pieces the route files share: calling a write with `{ actor }` when core takes it, and names in paths. */
import { JOB_NAME_PATTERN } from "@soniq/core";
import type { Context } from "hono";
import type { Env } from "../context.js";
import { notFound } from "../errors.js";
import { actorOptions } from "../features.js";
import { parseQueue } from "../query.js";

type WithActor = (target: string, options?: object) => Promise<unknown>;

export function actorCall(
  owner: object,
  method: unknown,
  target: string,
  actor: object | undefined,
  extra?: object,
): Promise<unknown> {
  const fn = method as WithActor;
  const options = actor || extra ? { ...(extra ?? {}), ...(actor ?? {}) } : undefined;
  return options ? fn.call(owner, target, options) : fn.call(owner, target);
}

export function actor(c: Context<Env>): { actor: string } | undefined {
  return actorOptions(c.get("features"), c.get("principal").label);
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
