/**
 * Flows as the pages and the API read and change them, through the app's `soniq.flows` (DESIGN.md
 * section 15). The one write beyond cancel, replaying a held flow's dead-lettered parent, goes
 * through `soniq.deadLetters.replay` (audited there), after checking the step belongs to the flow.
 */
import {
  FLOW_STATES,
  type Flow,
  type FlowState,
  type FlowStep,
  type FlowSummary,
  isJobId,
  type Soniq,
} from "@soniq/core";
import { TERMINAL_FLOW_STATES } from "@soniq/core/ops";
import { badRequest, DashboardError, notFound } from "../errors.js";

export interface FlowQuery {
  state?: FlowState | undefined;
  name?: string | undefined;
  limit: number;
}

/** A flow id from a path: core mints UUIDs, so anything else names no flow (never a query the column refuses). */
export function flowId(raw: string | undefined): string {
  if (raw === undefined || !isJobId(raw)) throw notFound("No flow with this id.");
  return raw;
}

export function isFlowState(value: string): value is FlowState {
  return (FLOW_STATES as readonly string[]).includes(value);
}

/** `?state=` and `?name=` of the list, checked; a bad state is a 400 naming the states. */
export function flowQuery(p: Record<string, string | undefined>, limit: number): FlowQuery {
  if (p.state && !isFlowState(p.state)) throw badRequest(`state takes one of ${FLOW_STATES.join(", ")}.`);
  return {
    ...(p.state ? { state: p.state as FlowState } : {}),
    ...(p.name ? { name: p.name.slice(0, 255) } : {}),
    limit,
  };
}

export function listFlows(soniq: Soniq, query: FlowQuery): Promise<FlowSummary[]> {
  return soniq.flows.list({
    ...(query.state ? { state: query.state } : {}),
    ...(query.name ? { name: query.name } : {}),
    limit: query.limit,
  });
}

export async function flowDetail(soniq: Soniq, id: string): Promise<Flow> {
  const flow = await soniq.flows.get(id);
  if (!flow) throw notFound(`No flow with id ${id}.`);
  return flow;
}

export const isTerminalFlow = (flow: { state: FlowState }): boolean =>
  (TERMINAL_FLOW_STATES as readonly FlowState[]).includes(flow.state);

/** Cancels an open flow (audited `flow.cancel` by core); a finished one is a 409 saying its state. */
export async function cancelFlow(soniq: Soniq, id: string, actor: { actor: string }): Promise<Flow> {
  const before = await flowDetail(soniq, id);
  if (isTerminalFlow(before))
    throw new DashboardError(
      "conflict",
      `Flow ${id} is ${before.state}; only a running or held flow can be cancelled.`,
    );
  if (!(await soniq.flows.cancel(id, actor)))
    throw new DashboardError("conflict", `Flow ${id} finished before it could be cancelled.`);
  return flowDetail(soniq, id);
}

/** The dead-lettered steps whose dependents wait on them: the parents a replay resumes the flow from. */
export function heldParents(flow: Flow): FlowStep[] {
  const held = flow.steps.filter((s) => s.state === "held");
  return flow.steps.filter(
    (s) => s.state === "dead_lettered" && held.some((h) => h.dependsOn.includes(s.ref)),
  );
}

/** Replays the dead letter of step `ref` (a held flow's failed parent); returns the new job's id. */
export async function replayStep(
  soniq: Soniq,
  id: string,
  ref: string,
  actor: { actor: string },
): Promise<{ jobId: string; deadLetterId: string }> {
  const flow = await flowDetail(soniq, id);
  const step = flow.steps.find((s) => s.ref === ref);
  if (!step) throw notFound(`Flow ${id} has no step ${ref}.`);
  if (step.state !== "dead_lettered")
    throw new DashboardError(
      "conflict",
      `Step ${ref} is ${step.state}; only a dead-lettered step can be replayed.`,
    );
  const jobId = await soniq.deadLetters.replay(step.jobId, actor);
  if (jobId === null) throw notFound(`The dead letter of step ${ref} (${step.jobId}) is gone.`);
  return { jobId, deadLetterId: step.jobId };
}

/** Where a step's box links: its dead letter, its job, or nowhere while it has no job row. */
export function stepHref(base: string, step: FlowStep): string | null {
  if (step.state === "dead_lettered") return `${base}/dead-letters/${step.jobId}`;
  if (step.state === "waiting" || step.state === "held") return null;
  if (
    step.state === "cancelled" &&
    step.reason &&
    step.reason !== "job_cancelled" &&
    step.reason !== "flow_cancelled"
  )
    return null;
  return `${base}/jobs/${step.jobId}`;
}
