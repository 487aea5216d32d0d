/**
 * `@soniq/core/ops`: what operator surfaces share (the CLI, the dashboard, the MCP server, and any tool an
 * operator builds): the version, the name pattern and the ended flow states they check against, the most ids
 * a list filter takes, how ids, durations, queue states, progress and worker counts read, how a typed duration
 * or `since` reads, the liveness words and thresholds behind `workers.list()`, the check of a replay against
 * the task registry, the redaction a surface applies to what it shows (rows, explanations, refusals; and the check
 * of redact paths a surface is given), and what its search matches while redacting. Applications import `@soniq/core`.
 */
export type { ResolvedSoniqOptions } from "./app/options.js";
export { JOB_NAME_PATTERN } from "./common/names.js";
export { TERMINAL_FLOW_STATES } from "./common/types.js";
export { SONIQ_VERSION } from "./common/version.js";
export type { LineSink } from "./dead-letters/service.js";
export { MAX_FILTER_IDS } from "./jobs/queries.js";
export { type RedactableRow, type Redactor, redactOptionProblems } from "./observability/redact.js";
export { type BulkGuardSource, matchesEveryDeadLetter } from "./ops/bulk-guard.js";
export { parseDuration, parsePastInstant } from "./ops/instants.js";
export {
  type ExplainSource,
  type QuotedRow,
  shownDelivery,
  shownExplanation,
  shownExplanationOf,
  shownRefusal,
  shownSchedule,
  shownUrl,
} from "./ops/redaction.js";
export { replayRefusal } from "./ops/registered.js";
export { type SearchableFilter, searchFilter, searchWords } from "./ops/search.js";
export { SHORT_ID_LENGTH, shortId } from "./ops/short-id.js";
export { type ShownSteps, type StepsSource, shownRows, shownSteps } from "./ops/steps-view.js";
export {
  durationWords,
  progressPercent,
  type QueueStateWord,
  queueLimitsText,
  queueStateWord,
  workerCounts,
} from "./ops/words.js";
export { EXACT_COUNTS_UP_TO } from "./queues/service.js";
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALE_AFTER_MS, suspectAfterMs } from "./worker/liveness.js";
export { WORKER_LIVENESS, type WorkerLiveness } from "./worker/service.js";
