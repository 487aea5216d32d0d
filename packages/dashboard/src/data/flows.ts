/**
 * Flows as the pages and the API read and change them, through the app's `soniq.flows` (DESIGN.md
 * section 15). The types are the shapes of core's `FlowSummary`, `Flow` and `FlowStep`, as far as the
 * dashboard reads them. The one write beyond cancel, replaying a held flow's dead-lettered parent, goes
 * through `soniq.deadLetter.replay` (audited there), after checking the step belongs to the flow.
 */
import type { Soniq } from "@soniq/core";
import { badRequest, DashboardError, notFound } from "../errors.js";

export const FLOW_STATES = ["running", "held", "succeeded", "failed", "cancelled"] as const;
export type FlowState = (typeof FLOW_STATES)[number];
const TERMINAL: readonly string[] = ["succeeded", "failed", "cancelled"];

export interface FlowStepView {
  ref: string;
  jobId: string;
  jobIds?: string[];
  jobName: string;
  state: string;
  dependsOn: string[];
  onParentFailure: string;
  reason?: string | null;
}

export interface FlowSummaryView {
  id: string;
  name: string | null;
  state: FlowState;
  counts: { total: number; open: number; done: number; failed: number; held: number };
  createdAt: Date;
  finishedAt: Date | null;
}

export interface FlowView extends FlowSummaryView {
  steps: FlowStepView[];
}

export interface FlowQuery {
  state?: FlowState | undefined;
  name?: string | undefined;
  limit: number;
}

interface FlowsFacet {
  get(id: string): Promise<FlowView | null>;
  list(filter: { state?: FlowState; name?: string; limit?: number }): Promise<FlowSummaryView[]>;
  cancel(id: string, options?: { actor?: string }): Promise<unknown>;
}

function flowsOf(soniq: Soniq): FlowsFacet {
  const flows = (soniq as unknown as { flows?: FlowsFacet }).flows;
  if (!flows || typeof flows.get !== "function")
    throw new DashboardError("not_found", "This Soniq has no workflows (soniq.flows): upgrade @soniq/core.");
  return flows;
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

export function listFlows(soniq: Soniq, query: FlowQuery): Promise<FlowSummaryView[]> {
  return flowsOf(soniq).list({
    ...(query.state ? { state: query.state } : {}),
    ...(query.name ? { name: query.name } : {}),
    limit: query.limit,
  });
}

export async function flowDetail(soniq: Soniq, id: string): Promise<FlowView> {
  const flow = await flowsOf(soniq).get(id);
  if (!flow) throw notFound(`No flow with id ${id}.`);
  return flow;
}

export const isTerminalFlow = (flow: { state: string }): boolean => TERMINAL.includes(flow.state);

/** Cancels an open flow (audited `flow.cancel` by core); a finished one is a 409 saying its state. */
export async function cancelFlow(soniq: Soniq, id: string, actor: { actor: string }): Promise<FlowView> {
  const before = await flowDetail(soniq, id);
  if (isTerminalFlow(before))
    throw new DashboardError(
      "conflict",
      `Flow ${id} is ${before.state}; only a running or held flow can be cancelled.`,
    );
  await flowsOf(soniq).cancel(id, actor);
  return flowDetail(soniq, id);
}

/** The dead-lettered steps whose dependents wait on them: the parents a replay resumes the flow from. */
export function heldParents(flow: FlowView): FlowStepView[] {
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
  const jobId = await soniq.deadLetter.replay(step.jobId, actor);
  if (jobId === null) throw notFound(`The dead letter of step ${ref} (${step.jobId}) is gone.`);
  return { jobId, deadLetterId: step.jobId };
}

/** Where a step's box links: its dead letter, its job, or nowhere while it has no job row. */
export function stepHref(base: string, step: FlowStepView): string | null {
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
