/**
 * `@soniq/core/plugin`: what a plugin or middleware author uses with `soniq.use(...)`: the hooks around a run
 * (`beforeJob`, `afterJob`, `onError`, `onOutcome`), wrapping middleware, the producer hook around every write
 * of new jobs (tracing plugins such as `@soniq/opentelemetry` stamp a trace context there), and the metrics
 * sink a worker reports to (`@soniq/prometheus`). Applications import `@soniq/core`.
 */
export type { Hooks, Middleware, Next, Plugin, StepInfo } from "./app/plugins.js";
export { isSoniqError, SoniqError } from "./common/errors.js";
export type { TraceContext } from "./common/types.js";
export { SONIQ_VERSION } from "./common/version.js";
export type { JobContext } from "./jobs/context.js";
export type {
  ClaimEvent,
  JobEndEvent,
  JobEndStatus,
  JobStartEvent,
  MetricsSink,
  WebhookPendingEvent,
} from "./observability/sink.js";
export {
  type ProducerHook,
  type RunOutcome,
  type RunOutcomeKind,
  type SendEvent,
  type SendOrigin,
  type SentJob,
  traceIdOf,
} from "./observability/tracing.js";
