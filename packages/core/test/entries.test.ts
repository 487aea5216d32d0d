/**
 * The two entries say what they are: `@soniq/core` is the app API, `@soniq/core/backend` what a backend
 * author uses. Their run-time exports are pinned here, so a value joins an entry on purpose.
 */
import { describe, expect, it } from "vitest";
import * as backendEntry from "../src/backend.js";
import * as appEntry from "../src/index.js";

const isClass = (value: unknown) =>
  typeof value === "function" && Function.prototype.toString.call(value).startsWith("class ");

describe("core/entries", () => {
  it("core/entries-app: @soniq/core exports the app's values, and no class but Soniq and the errors", () => {
    expect(Object.keys(appEntry).sort()).toEqual([
      "AUDIT_ACTIONS",
      "DEAD_LETTER_REASONS",
      "DEFAULT_HEARTBEAT_INTERVAL_MS",
      "DEFAULT_SIGNATURE_TOLERANCE_MS",
      "DEFAULT_STALE_AFTER_MS",
      "ESTIMABLE_COUNTS",
      "EXACT_COUNTS_UP_TO",
      "EXPLAIN_CODES",
      "FLOW_STATES",
      "FLOW_STEP_STATES",
      "JOB_NAME_PATTERN",
      "JOB_STATUSES",
      "JobAbortedError",
      "MAX_FLOW_STEPS",
      "MAX_PROGRESS_BYTES",
      "MAX_STEP_PARENTS",
      "PARENT_FAILURE_POLICIES",
      "PermanentError",
      "REDACTED",
      "SHORT_ID_LENGTH",
      "SONIQ_ERROR_CODES",
      "SONIQ_VERSION",
      "Soniq",
      "SoniqError",
      "TERMINAL_FLOW_STATES",
      "TERMINAL_JOB_STATUSES",
      "TICK_OUTCOMES",
      "WEBHOOK_DELIVERY_STATUSES",
      "WEBHOOK_EVENTS",
      "WORKER_LIVENESS",
      "WORKER_STATUSES",
      "describeOptions",
      "durationWords",
      "isPermanentError",
      "isSnooze",
      "isSoniqError",
      "isValidJobName",
      "manualClock",
      "progressPercent",
      "queueLimitsText",
      "queueStateWord",
      "shortId",
      "snooze",
      "suspectAfterMs",
      "systemClock",
      "traceIdOf",
      "verifyWebhookSignature",
      "workerCounts",
    ]);
    const classes = Object.entries(appEntry).filter(([, v]) => isClass(v));
    expect(classes.map(([name]) => name).sort()).toEqual([
      "JobAbortedError",
      "PermanentError",
      "Soniq",
      "SoniqError",
    ]);
  });

  it("core/entries-backend: @soniq/core/backend exports the contract's values, the errors and the helpers backends use", () => {
    expect(Object.keys(backendEntry).sort()).toEqual([
      "BACKEND_FACETS",
      "DEAD_LETTER_REASONS",
      "DEFAULT_PAGE_SIZE",
      "ESTIMABLE_COUNTS",
      "EXACT_COUNTS_UP_TO",
      "FLOW_STATES",
      "FLOW_STEP_STATES",
      "JOB_STATUSES",
      "MAX_PAGE_SIZE",
      "PARENT_FAILURE_POLICIES",
      "SCHEDULE_COLUMNS",
      "SONIQ_ERROR_CODES",
      "SoniqError",
      "TERMINAL_JOB_STATUSES",
      "TICK_COLUMNS",
      "TICK_OUTCOMES",
      "WEBHOOK_DELIVERY_STATUSES",
      "WEBHOOK_EVENTS",
      "WORKER_STATUSES",
      "admitStep",
      "auditListQuery",
      "auditRecord",
      "cancelFlow",
      "chooseClaim",
      "claimQueues",
      "deadLetterListQuery",
      "deadLetterMatch",
      "decodeStepJob",
      "dependentEffect",
      "encodeStepJob",
      "finishStep",
      "finishSteps",
      "flowStateOf",
      "fromStoredTiming",
      "guardBackend",
      "isClosedStep",
      "isLimited",
      "isSoniqError",
      "jobListQuery",
      "limitedBudget",
      "newJobId",
      "parentOutcome",
      "purgeStep",
      "queueInfo",
      "queueSlots",
      "recurringStatus",
      "replayStep",
      "resolveTick",
      "runFlowAsync",
      "runFlowSync",
      "settledSteps",
      "startFlow",
      "statsQuery",
      "toFlowStep",
      "toFlowSummary",
      "toStoredTiming",
      "triggerAudit",
      "unwrapBackend",
    ]);
    expect(
      Object.entries(backendEntry)
        .filter(([, v]) => isClass(v))
        .map(([name]) => name),
    ).toEqual(["SoniqError"]);
  });

  it("core/entries-shared: what both entries export is the same value (one error class, one set of words)", () => {
    const app = new Map(Object.entries(appEntry));
    const shared = Object.entries(backendEntry).filter(([name]) => app.has(name));
    expect(shared.length).toBeGreaterThan(0);
    for (const [name, value] of shared) expect(value, name).toBe(app.get(name));
  });
});
