/**
 * The JSON body each write route accepts, key by key (security/body.ts refuses any other key at any
 * level). Bulk dead-letter actions take their filter under `filter`, the selected `ids`, `dryRun`, and
 * `all: true` to act on every dead letter when the filter is empty; `configure` takes the queue limits;
 * flow cancel and the replay of a flow's dead-lettered step take none either (`FLOW_BODY`), nor does a webhook
 * redelivery (`REDELIVER_BODY`); a signal takes `{ name, payload, key }` and a single replay its step options
 * `{ steps, resolve }`; every other write takes no body (an empty body or `{}`).
 */
import type { BodyShape } from "../security/body.js";

export const BULK_BODY: BodyShape = {
  filter: { queue: true, name: true, reason: true, since: true, until: true, q: true },
  ids: true,
  dryRun: true,
  all: true,
};

export const CONFIGURE_BODY: BodyShape = {
  concurrency: true,
  groupConcurrency: true,
  rateLimit: { max: true, perMs: true },
};

export const NO_BODY: BodyShape = {};

/** `POST /jobs/:id/signal`: the signal's name, its JSON payload (any value) and an optional dedup key. */
export const SIGNAL_BODY: BodyShape = { name: true, payload: true, key: true };

/**
 * `POST /dead-letters/:id/replay`: the step options, `steps` ("keep" or "discard") and `resolve` (step names to
 * values: any names, core checks them). Empty or `{}` replays as before.
 */
export const REPLAY_BODY: BodyShape = { steps: true, resolve: true };

/** `POST /flows/:id/cancel` and `POST /flows/:id/steps/:ref/replay`: no keys (the actor is the key's label). */
export const FLOW_BODY: BodyShape = {};
/** `POST /webhook-deliveries/:id/redeliver`: the delivery is in the path; the body is empty or `{}`. */
export const REDELIVER_BODY: BodyShape = NO_BODY;

/** The shape for a write route's path (relative to `/api`). */
export function bodyShapeFor(path: string): BodyShape {
  if (/^\/dead-letters\/(replay|purge)-where$/.test(path)) return BULK_BODY;
  if (/^\/queues\/[^/]+\/configure$/.test(path)) return CONFIGURE_BODY;
  if (/^\/flows\/[^/]+\/(cancel|steps\/[^/]+\/replay)$/.test(path)) return FLOW_BODY;
  if (/^\/webhook-deliveries\/[^/]+\/redeliver$/.test(path)) return REDELIVER_BODY;
  if (/^\/jobs\/[^/]+\/signal$/.test(path)) return SIGNAL_BODY;
  if (/^\/dead-letters\/[^/]+\/replay$/.test(path)) return REPLAY_BODY;
  return NO_BODY;
}
