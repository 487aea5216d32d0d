/**
 * `flow.finished`: every flow that reaches a terminal state (succeeded, failed, cancelled) fires once per
 * endpoint receiving the event. A flow's finish is written by whichever write ends its last step, on any
 * backend path, so the event is not written there: the worker holding the maintenance lease sweeps the
 * finished flows not notified yet (`flows.notifyFinished`), marking them and writing their deliveries in one
 * transaction (an outbox: a crash loses none, none is doubled). Flows are marked even when no endpoint
 * receives the event, so an endpoint registered later does not get old flows. A flow reopened by a replay
 * and finished again fires again. Its payload carries no job values, so `redact` does not apply.
 */

import type { FlowSummary } from "../common/types.js";
import type { GuardedBackend } from "../contract/index.js";
import type { WebhookDispatch } from "./dispatch.js";

/** Flows marked per transaction. */
export const FLOW_SWEEP_BATCH = 500;
/** Batches per sweep at most (the rest waits for the next maintenance run). */
const MAX_BATCHES = 20;

/** The event's `data`. */
export function flowFinishedData(flow: FlowSummary): Record<string, unknown> {
  return {
    flowId: flow.id,
    name: flow.name,
    state: flow.state,
    counts: { ...flow.counts },
    createdAt: flow.createdAt.toISOString(),
    finishedAt: flow.finishedAt?.toISOString() ?? null,
  };
}

/** Writes `flow.finished` for the flows finished since the last sweep; returns the deliveries written. */
export async function sweepFinishedFlows(
  backend: GuardedBackend<unknown>,
  webhooks: WebhookDispatch,
): Promise<number> {
  if (!backend.supports("flows")) return 0;
  await webhooks.refresh();
  let written = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const marked = await backend.flows.notifyFinished(FLOW_SWEEP_BATCH, (flows) => {
      const rows = flows.flatMap((flow) =>
        webhooks.rows("flow.finished", () => flowFinishedData(flow), flow.finishedAt ?? new Date()),
      );
      written += rows.length;
      return rows;
    });
    if (marked < FLOW_SWEEP_BATCH) break;
  }
  if (written > 0) webhooks.notify();
  return written;
}
