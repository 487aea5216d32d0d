/** What a Soniq instance shares with its workers. Internal: one per instance, never global. */

import type { Logger } from "../common/logger.js";
import type { GuardedBackend } from "../contract/index.js";
import type { RegisteredJob } from "../jobs/definition.js";
import {
  type JobEndEvent,
  type JobStartEvent,
  type MetricsSink,
  noopMetricsSink,
  type WebhookPendingEvent,
} from "../observability/sink.js";
import type { ProducerHook } from "../observability/tracing.js";
import type { DeclaredSchedule } from "../schedules/declare.js";
import type { WebhookDispatch } from "../webhooks/dispatch.js";
import type { SecretBox } from "../webhooks/secrets.js";
import type { ResolvedSoniqOptions } from "./options.js";
import type { Middleware, Plugin } from "./plugins.js";

/** The slice of a worker the instance needs: to abort a job cancelled in this process. */
export interface LocalWorker {
  cancelLocal(jobId: string): void;
  /** Wake the worker (a job became available). */
  nudge(): void;
}

export interface Runtime {
  readonly backend: GuardedBackend<unknown>;
  readonly options: ResolvedSoniqOptions;
  readonly logger: Logger;
  readonly registry: ReadonlyMap<string, RegisteredJob>;
  /** The schedules declared in code on this instance (`soniq.schedules.declare`), by name. */
  readonly declarations: Map<string, DeclaredSchedule>;
  readonly plugins: Plugin[];
  /** Wrapping middleware, outermost first (rebuilt by `use`). */
  middleware: Middleware[];
  /** Producer hooks around every write of new jobs, outermost first (see tracing.ts). */
  readonly producers: ProducerHook[];
  readonly workers: Set<LocalWorker>;
  readonly metrics: SafeMetrics;
  /** Which webhook endpoints an event goes to (a cached list), and the deliverers to wake. */
  readonly webhooks: WebhookDispatch;
  /** Endpoint secrets' encryption (`options.webhooks.secretKey`). */
  readonly secrets: SecretBox;
}

/** The instance's sink with every call guarded: a throwing or rejecting sink is logged and ignored. */
export class SafeMetrics {
  /** False for the no-op sink, so the hot path builds no event objects nobody reads. */
  readonly active: boolean;

  constructor(
    private readonly sink: MetricsSink,
    private readonly logger: Logger,
  ) {
    this.active = sink !== noopMetricsSink;
  }

  private guard(what: string, fn: () => void | Promise<void>): void {
    try {
      const r = fn();
      if (r && typeof r.then === "function") r.then(undefined, (err: unknown) => this.report(what, err));
    } catch (err) {
      this.report(what, err);
    }
  }

  private report(what: string, err: unknown): void {
    this.logger.warn({ err, sinkMethod: what }, "metrics sink failed; ignoring");
  }

  jobStart(event: JobStartEvent): void {
    this.guard("recordJobStart", () => this.sink.recordJobStart(event));
  }
  jobEnd(event: JobEndEvent): void {
    this.guard("recordJobEnd", () => this.sink.recordJobEnd(event));
  }
  claim(count: number, durationMs: number): void {
    const sink = this.sink;
    if (sink.recordClaim) this.guard("recordClaim", () => sink.recordClaim?.({ count, durationMs }));
  }
  event(name: string, payload: Record<string, unknown>): void {
    const sink = this.sink;
    if (sink.recordEvent) this.guard("recordEvent", () => sink.recordEvent?.(name, payload));
  }
  /** Whether the sink takes `recordWebhookPending` (else the outbox is not counted for it). */
  get wantsWebhookPending(): boolean {
    return typeof this.sink.recordWebhookPending === "function";
  }
  webhookPending(event: WebhookPendingEvent): void {
    const sink = this.sink;
    if (sink.recordWebhookPending)
      this.guard("recordWebhookPending", () => sink.recordWebhookPending?.(event));
  }
}

/** Calls a plugin hook; a hook that throws or rejects is logged and ignored. */
export async function callHook(
  rt: Runtime,
  hook: "beforeJob" | "afterJob" | "onError",
  call: (p: Plugin) => unknown,
): Promise<void> {
  for (const plugin of rt.plugins) {
    if (!plugin[hook]) continue;
    try {
      await call(plugin);
    } catch (err) {
      rt.logger.warn({ err, hook, plugin: plugin.name ?? null }, "hook failed; ignoring");
    }
  }
}
