/**
 * `jobs.explain(id)` for a flow step whose job is not released yet (the id was minted at start): `waiting`
 * on its pending parents (`waiting_on_parents`), `held` by a parent's dead letter (`held_by_dead_letter`,
 * with the parent's ref, dead-letter id and reason), or `cancelled` before it ran (with the step's reason).
 */
import type { GuardedBackend } from "../contract/index.js";

interface StepExplanation {
  status: "waiting" | "held" | "cancelled";
  verdict: "waiting" | "held" | "cancelled";
  reasons: {
    code: "waiting_on_parents" | "held_by_dead_letter" | "cancelled";
    message: string;
    evidence: Record<string, unknown>;
  }[];
}

export async function explainStep(
  backend: GuardedBackend<unknown>,
  id: string,
): Promise<StepExplanation | null> {
  if (!backend.supports("flows")) return null;
  const match = await backend.flows.stepOfJob(id);
  if (match === null || match.step.jobId !== id) return null;
  const { step, flowId } = match;
  if (step.state === "cancelled") {
    // Cancelled before its release: the step never had a job row.
    const evidence = { flowId, ref: step.ref, reason: step.reason, at: step.finishedAt };
    const message = `The flow step "${step.ref}" was cancelled before it ran (${step.reason ?? "cancelled"}).`;
    return { status: "cancelled", verdict: "cancelled", reasons: [{ code: "cancelled", message, evidence }] };
  }
  if (step.state !== "waiting" && step.state !== "held") return null;
  const flow = await backend.flows.get(flowId);
  const parents = (flow?.steps ?? []).filter((s) => step.dependsOn.includes(s.ref));
  const pending = parents
    .filter((p) => p.state !== "done")
    .map((p) => ({ ref: p.ref, state: p.state, jobId: p.jobId }));
  const reasons: StepExplanation["reasons"] = [];
  if (step.state === "held") {
    for (const parent of parents.filter((p) => p.state === "dead_lettered")) {
      const dead = await backend.deadLetters.get(parent.jobId);
      reasons.push({
        code: "held_by_dead_letter",
        message: `Held: its parent "${parent.ref}" was dead-lettered (${dead?.deadLetterReason ?? "purged"}); replay ${parent.jobId} to resume the flow, or purge it to cancel this step.`,
        evidence: {
          flowId,
          ref: step.ref,
          parentRef: parent.ref,
          deadLetterId: parent.jobId,
          reason: dead?.deadLetterReason ?? null,
          lastError: dead?.lastError ?? null,
        },
      });
    }
  }
  const waitingOn = pending.filter((p) => p.state !== "dead_lettered");
  if (waitingOn.length > 0 || reasons.length === 0) {
    reasons.push({
      code: "waiting_on_parents",
      message: `Waiting for ${waitingOn.length} parent step(s) of flow ${flowId}: ${waitingOn.map((p) => p.ref).join(", ")}.`,
      evidence: { flowId, ref: step.ref, pending: waitingOn.map((p) => p.ref), parents: pending },
    });
  }
  return { status: step.state, verdict: step.state, reasons };
}
