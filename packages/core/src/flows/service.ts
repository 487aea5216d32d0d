/**
 * `soniq.flows`: start, read, list, cancel and wait for workflows (DESIGN.md section 15), and `ctx.flow`
 * for a step's handler. The rules of what a step's outcome does to the flow live in `flow-rules.ts` and
 * `flow-engine.ts` and run inside the backends' writes; this file validates and reads.
 */

import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import { newJobId } from "../common/ids.js";
import { JOB_NAME_PATTERN } from "../common/names.js";
import {
  FLOW_STATES,
  type Flow,
  type FlowContext,
  type FlowState,
  type FlowStepDefinition,
  type FlowSummary,
  type Job,
  type ParentOutcome,
  TERMINAL_FLOW_STATES,
} from "../common/types.js";
import type { FlowListQuery, NewFlowStep } from "../contract/flows.js";
import { sendEvent, txOptions } from "../jobs/definition.js";
import { DEFAULT_PAGE_SIZE, filterObject, invalid, MAX_PAGE_SIZE, optionalString } from "../jobs/queries.js";
import { type ActorOptions, actorOf, audited, auditRecord } from "../observability/audit.js";
import { produce } from "../observability/tracing.js";
import { invalidFlow, prepareFlowSteps } from "./steps.js";

/** `flows.start(definition)`. */
export interface FlowDefinition {
  /** A label (dotted lowercase, like a job name), optional. */
  name?: string;
  /** The steps by ref. */
  steps: Record<string, FlowStepDefinition>;
}

/** `flows.start(definition, options)`: the caller's transaction, and who started it (`Flow.createdBy`). */
export interface StartFlowOptions<TTx = unknown> extends ActorOptions {
  tx?: TTx;
}

/** What `flows.start` returns: the flow's id and every step's job id (minted now), by ref. */
export interface StartedFlow {
  id: string;
  jobs: Record<string, string>;
}

export interface ListFlowsFilter {
  state?: FlowState;
  name?: string;
  /** Default 100, at most 1000. */
  limit?: number;
  /** Keyset paging: the flows older than this one (pass a page's last flow or its id). */
  position?: string | { id: string };
}

export interface WaitForFlowOptions {
  /** Reject with `SONIQ_TIMEOUT` after this long (default: wait forever). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** How often to read the flow (default 100 ms). */
  pollIntervalMs?: number;
}

function jobsByRef(steps: readonly NewFlowStep[]): Record<string, string> {
  return Object.fromEntries(steps.map((s) => [s.ref, s.job.id]));
}

function flowListQuery(filter: ListFlowsFilter | undefined): FlowListQuery {
  const what = "flows.list(filter)";
  const f = filterObject(filter, what, ["state", "name", "limit", "position"]);
  if (f.state !== undefined && !FLOW_STATES.includes(f.state as FlowState)) {
    throw invalid(`${what}.state`, `expected one of ${FLOW_STATES.join(", ")}`, f.state);
  }
  const limit = f.limit === undefined ? DEFAULT_PAGE_SIZE : f.limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
    throw invalid(`${what}.limit`, "expected a positive integer", limit);
  }
  const position = f.position as ListFlowsFilter["position"];
  const before = typeof position === "object" && position !== null ? position.id : position;
  return {
    state: (f.state as FlowState | undefined) ?? null,
    name: optionalString(f.name, `${what}.name`),
    limit: Math.min(limit, MAX_PAGE_SIZE),
    before: optionalString(before, `${what}.position`)?.toLowerCase() ?? null,
  };
}

export class FlowService<TTx = unknown> {
  constructor(
    private readonly rt: Runtime,
    /** Called after this instance cancelled a flow (its `waitFor` waiters re-read their ids). */
    private readonly onCancelled: () => void = () => {},
  ) {}

  /**
   * Starts a flow in one transaction (the caller's `tx` on Postgres and SQLite): the flow, its steps, and
   * the jobs of the steps without parents. Validated first (`SONIQ_INVALID_FLOW`; nothing written).
   */
  start(definition: FlowDefinition, options: StartFlowOptions<TTx> = {}): Promise<StartedFlow> {
    // Not async on purpose (as enqueue): a SQLite `tx` must see the writes before it commits.
    try {
      const actor = actorOf(options, "flows.start(options)", ["tx"]);
      const tx = txOptions(this.rt.backend, options.tx);
      if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
        throw invalidFlow("flows.start() takes { name, steps }.", "definition");
      }
      const extra = Object.keys(definition).find((k) => k !== "name" && k !== "steps");
      if (extra !== undefined)
        throw invalidFlow(`A flow has no key "${extra}" (it takes name and steps).`, extra);
      const name = definition.name ?? null;
      if (name !== null && (typeof name !== "string" || !JOB_NAME_PATTERN.test(name) || name.length > 255)) {
        throw invalidFlow(
          'A flow\'s name is dotted lowercase, like a job name (e.g. "orders.fulfil").',
          "name",
        );
      }
      const id = newJobId();
      const steps = prepareFlowSteps(
        definition.steps,
        id,
        new Set(),
        null,
        this.rt.registry,
        this.rt.options,
      );
      // One send for the whole flow: a tracing plugin's context is stored on every step's job (a waiting
      // step's job carries it until its release).
      const write = (ready: NewFlowStep[]) => {
        const jobs = ready.map((step) => step.job);
        return produce(
          this.rt.producers,
          () => sendEvent("flow", jobs),
          jobs,
          () => this.rt.backend.flows.start({ id, name, createdBy: actor, steps: ready }, tx),
        ).then(() => {
          for (const worker of this.rt.workers) worker.nudge();
          return { id, jobs: jobsByRef(ready) };
        });
      };
      return steps instanceof Promise ? steps.then(write) : write(steps);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The flow with its steps (in the order given, then added), or null. */
  get(id: string): Promise<Flow | null> {
    return this.rt.backend.flows.get(String(id).toLowerCase());
  }

  /** Newest first; `{ state, name, limit, position }`. */
  list(filter?: ListFlowsFilter): Promise<FlowSummary[]> {
    try {
      return this.rt.backend.flows.list(flowListQuery(filter));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Cancels an open flow: waiting, held and queued steps are cancelled and running ones aborted (their
   * `ctx.signal`, at once in this process, else at their worker's next heartbeat). Audited `flow.cancel`.
   * False when the flow is missing or already finished.
   */
  async cancel(id: string, options?: ActorOptions): Promise<boolean> {
    const record = auditRecord("flow.cancel", actorOf(options, "flows.cancel(options)"), String(id), null);
    const result = await audited(
      this.rt.backend,
      record,
      (r) => this.rt.backend.flows.cancel(String(id).toLowerCase(), r),
      (r) => r.cancelled,
    );
    for (const jobId of result.cancelledJobIds)
      for (const worker of this.rt.workers) worker.cancelLocal(jobId);
    if (result.cancelled) this.onCancelled();
    return result.cancelled;
  }

  /**
   * Resolves with the flow once it is `succeeded`, `failed` or `cancelled` (a `held` flow is still open);
   * rejects with `SONIQ_TIMEOUT` after `timeoutMs`, and with `SONIQ_INVALID_ARGUMENT` for an unknown id.
   */
  async waitFor(id: string, options: WaitForFlowOptions = {}): Promise<Flow> {
    const every = options.pollIntervalMs ?? 100;
    const deadline =
      options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
    for (;;) {
      options.signal?.throwIfAborted();
      const flow = await this.get(id);
      if (flow === null) throw invalid("flows.waitFor(id)", "no flow has this id", id);
      if ((TERMINAL_FLOW_STATES as readonly string[]).includes(flow.state)) return flow;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new SoniqError(
          "SONIQ_TIMEOUT",
          `Flow ${id} is still ${flow.state} after ${options.timeoutMs} ms.`,
          {
            context: { id, state: flow.state, timeoutMs: options.timeoutMs },
          },
        );
      }
      // Not unref'd: the caller awaits this wait, so it keeps the process alive for one poll at a time.
      await new Promise<void>((resolve) => setTimeout(resolve, Math.min(every, left)));
    }
  }
}

/** `ctx.flow` of one run: `add`'s steps wait here until the run's `done` writes them. */
export class RunFlowContext implements FlowContext {
  readonly added: NewFlowStep[] = [];

  constructor(
    private readonly rt: Runtime,
    readonly id: string,
    readonly ref: string,
  ) {}

  parents(): Promise<Record<string, ParentOutcome>> {
    return this.rt.backend.flows.parents(this.id, this.ref);
  }

  async add(steps: Record<string, FlowStepDefinition>): Promise<Record<string, string>> {
    const flow = await this.rt.backend.flows.get(this.id);
    if (flow === null) throw invalidFlow(`Flow ${this.id} no longer exists.`, "flow");
    const existing = new Set([...flow.steps.map((s) => s.ref), ...this.added.map((s) => s.ref)]);
    const ready = await prepareFlowSteps(
      steps,
      this.id,
      existing,
      this.ref,
      this.rt.registry,
      this.rt.options,
    );
    this.added.push(...ready);
    return jobsByRef(ready);
  }
}

/** `ctx.flow` for a claimed job: a context for a flow step's job, null for any other. */
export function flowContextOf(rt: Runtime, job: Job): RunFlowContext | null {
  return job.flowId === null || job.stepRef === null ? null : new RunFlowContext(rt, job.flowId, job.stepRef);
}
