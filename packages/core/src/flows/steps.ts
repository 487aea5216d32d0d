/**
 * Validating and preparing a flow's steps (`flows.start`, `ctx.flow.add`), before anything is written:
 * refs, dependencies (known refs, no duplicate, no self-dependency, no cycle), the limits, each step's job
 * and args through the one enqueue path (`prepareJob`). Every refusal is `SONIQ_INVALID_FLOW` naming the
 * field (`context.field`) and, for a step, its ref (`context.ref`).
 */

import type { ResolvedSoniqOptions } from "../app/options.js";
import { isSoniqError, SoniqError } from "../common/errors.js";
import { JOB_NAME_PATTERN } from "../common/names.js";
import {
  type FlowStepDefinition,
  PARENT_FAILURE_POLICIES,
  type ParentFailurePolicy,
} from "../common/types.js";
import type { NewFlowStep } from "../contract/flows.js";
import type { NewJob } from "../contract/jobs.js";
import { prepareJob, type RegisteredJob, resolveTarget } from "../jobs/definition.js";

/** At most this many steps in a flow, and parents of one step. */
export const MAX_FLOW_STEPS = 10_000;
export const MAX_STEP_PARENTS = 10_000;

const STEP_KEYS = ["job", "args", "options", "dependsOn", "onParentFailure"];
const REFUSED_OPTIONS = ["dedupKey", "unique", "tx"];

export function invalidFlow(
  message: string,
  field: string,
  ref?: string,
  extra: Record<string, unknown> = {},
  cause?: unknown,
): SoniqError {
  return new SoniqError("SONIQ_INVALID_FLOW", message, {
    context: { field, ...(ref === undefined ? {} : { ref }), ...extra },
    cause,
  });
}

interface Checked {
  ref: string;
  def: FlowStepDefinition;
  dependsOn: string[];
  policy: ParentFailurePolicy;
}

function checkStep(ref: string, def: unknown, known: ReadonlySet<string>): Checked {
  const at = `steps.${ref}`;
  if (!JOB_NAME_PATTERN.test(ref) || ref.length > 255) {
    throw invalidFlow(
      `Step ref "${ref}" is not a dotted lowercase identifier (like "charge" or "items.1").`,
      "steps",
      ref,
    );
  }
  if (typeof def !== "object" || def === null || Array.isArray(def)) {
    throw invalidFlow(
      `Step "${ref}" must be an object { job, args, options, dependsOn, onParentFailure }.`,
      at,
      ref,
    );
  }
  const unknown = Object.keys(def).find((k) => !STEP_KEYS.includes(k));
  if (unknown !== undefined) {
    throw invalidFlow(
      `Step "${ref}" has no key "${unknown}" (a step takes ${STEP_KEYS.join(", ")}).`,
      `${at}.${unknown}`,
      ref,
    );
  }
  const step = def as FlowStepDefinition;
  const given = step.dependsOn ?? [];
  if (!Array.isArray(given) || given.some((p) => typeof p !== "string")) {
    throw invalidFlow(`Step "${ref}": dependsOn must be an array of step refs.`, `${at}.dependsOn`, ref);
  }
  if (given.length > MAX_STEP_PARENTS) {
    throw invalidFlow(
      `Step "${ref}" has ${given.length} parents; at most ${MAX_STEP_PARENTS}.`,
      `${at}.dependsOn`,
      ref,
    );
  }
  const seen = new Set<string>();
  for (const parent of given) {
    if (parent === ref) throw invalidFlow(`Step "${ref}" depends on itself.`, `${at}.dependsOn`, ref);
    if (seen.has(parent)) {
      throw invalidFlow(`Step "${ref}" lists "${parent}" twice in dependsOn.`, `${at}.dependsOn`, ref, {
        parent,
      });
    }
    if (!known.has(parent)) {
      throw invalidFlow(
        `Step "${ref}" depends on "${parent}", which is not a step of the flow.`,
        `${at}.dependsOn`,
        ref,
        { parent },
      );
    }
    seen.add(parent);
  }
  const policy = step.onParentFailure ?? "hold";
  if (!PARENT_FAILURE_POLICIES.includes(policy)) {
    throw invalidFlow(
      `Step "${ref}": onParentFailure must be "hold", "cancel" or "run".`,
      `${at}.onParentFailure`,
      ref,
    );
  }
  const options = step.options;
  if (options !== undefined && (typeof options !== "object" || options === null || Array.isArray(options))) {
    throw invalidFlow(`Step "${ref}": options must be an object.`, `${at}.options`, ref);
  }
  const refused = options === undefined ? undefined : REFUSED_OPTIONS.find((k) => k in options);
  if (refused !== undefined) {
    throw invalidFlow(
      `Step "${ref}": option "${refused}" does not apply to a flow step (its job is never deduplicated; pass tx to flows.start).`,
      `${at}.options.${refused}`,
      ref,
    );
  }
  return { ref, def: step, dependsOn: [...given], policy };
}

/** The steps in an order where every parent comes before its dependents (Kahn); a cycle is refused. */
function parentsFirst(steps: readonly Checked[]): Checked[] {
  const byRef = new Map(steps.map((s) => [s.ref, s]));
  const pending = new Map(steps.map((s) => [s.ref, s.dependsOn.filter((p) => byRef.has(p)).length]));
  const children = new Map<string, string[]>();
  for (const s of steps)
    for (const p of s.dependsOn) if (byRef.has(p)) children.set(p, [...(children.get(p) ?? []), s.ref]);
  const ready = steps.filter((s) => pending.get(s.ref) === 0);
  const order: Checked[] = [];
  for (let i = 0; i < ready.length; i++) {
    const step = ready[i] as Checked;
    order.push(step);
    for (const child of children.get(step.ref) ?? []) {
      const left = (pending.get(child) ?? 0) - 1;
      pending.set(child, left);
      if (left === 0) ready.push(byRef.get(child) as Checked);
    }
  }
  if (order.length < steps.length) {
    const stuck = steps.find((s) => (pending.get(s.ref) ?? 0) > 0) as Checked;
    throw invalidFlow(
      `The steps form a cycle through "${stuck.ref}"; a flow's dependencies must not loop.`,
      `steps.${stuck.ref}.dependsOn`,
      stuck.ref,
    );
  }
  return order;
}

function prepareStepJob(
  step: Checked,
  flowId: string,
  registry: ReadonlyMap<string, RegisteredJob>,
  defaults: ResolvedSoniqOptions,
): NewJob | Promise<NewJob> {
  const at = `steps.${step.ref}`;
  const name = typeof step.def.job === "string" ? step.def.job : step.def.job?.name;
  const wrap = (err: unknown): never => {
    if (!isSoniqError(err)) throw err;
    const field =
      err.code === "SONIQ_TASK_ARGS_INVALID"
        ? `${at}.args`
        : err.code === "SONIQ_INVALID_OPTIONS"
          ? `${at}.options`
          : `${at}.job`;
    throw invalidFlow(
      `Step "${step.ref}": ${err.message}`,
      field,
      step.ref,
      { code: err.code, ...err.context },
      err,
    );
  };
  const finish = (job: NewJob): NewJob => ({
    ...job,
    flowId,
    stepRef: step.ref,
    dedupKey: null,
    unique: false,
    argsHash: null,
  });
  try {
    const target = resolveTarget(name, registry, defaults);
    const job = prepareJob(target, step.def.args ?? null, step.def.options, defaults);
    return job instanceof Promise ? job.then(finish, wrap) : finish(job);
  } catch (err) {
    return wrap(err);
  }
}

/**
 * Checks `steps` (a record keyed by ref) against the flow's `existing` refs and prepares each step's job.
 * The result lists parents before dependents. Synchronous unless a job's schema validates asynchronously
 * (a SQLite `tx` needs the write inside the caller's synchronous transaction).
 */
export function prepareFlowSteps(
  steps: unknown,
  flowId: string,
  existing: ReadonlySet<string>,
  addedBy: string | null,
  registry: ReadonlyMap<string, RegisteredJob>,
  defaults: ResolvedSoniqOptions,
): NewFlowStep[] | Promise<NewFlowStep[]> {
  if (typeof steps !== "object" || steps === null || Array.isArray(steps)) {
    throw invalidFlow("steps must be an object of steps keyed by ref.", "steps");
  }
  const refs = Object.keys(steps);
  if (refs.length === 0) throw invalidFlow("A flow needs at least one step.", "steps");
  if (refs.length + existing.size > MAX_FLOW_STEPS) {
    throw invalidFlow(
      `A flow holds at most ${MAX_FLOW_STEPS} steps (this one would hold ${refs.length + existing.size}).`,
      "steps",
    );
  }
  const dup = refs.find((ref) => existing.has(ref));
  if (dup !== undefined) throw invalidFlow(`The flow already has a step "${dup}".`, "steps", dup);
  const known = new Set([...existing, ...refs]);
  const checked = refs.map((ref) => checkStep(ref, (steps as Record<string, unknown>)[ref], known));
  const ordered = parentsFirst(checked);
  const jobs = ordered.map((step) => prepareStepJob(step, flowId, registry, defaults));
  const build = (ready: NewJob[]): NewFlowStep[] =>
    ordered.map((step, i) => ({
      ref: step.ref,
      job: ready[i] as NewJob,
      dependsOn: step.dependsOn,
      onParentFailure: step.policy,
      addedBy,
    }));
  if (jobs.some((j) => j instanceof Promise)) return Promise.all(jobs).then(build);
  return build(jobs as NewJob[]);
}
