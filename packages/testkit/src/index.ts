export { APPLICABILITY_ID, type ExcludedCase } from "./applicability.js";
export { CONFORMANCE_CASES, type ConformanceCaseId } from "./cases/index.js";
export { type ManualClock, manualClock } from "./clock.js";
export { delay, type EventuallyOptions, eventually } from "./eventually.js";
export { newJob, uniqueQueue } from "./new-job.js";
export {
  type ConformanceOptions,
  type ConformancePlan,
  type ConformanceSkips,
  LEAK_CHECK_ID,
  registerConformanceSuite,
} from "./register.js";
export type {
  BackendHarness,
  BackendInspector,
  CaseContext,
  CaseRequirements,
  ConformanceCase,
  HarnessFactory,
  HarnessInfo,
  RunnerTestContext,
  TestRunner,
} from "./types.js";
export { withoutCapabilities } from "./without-capabilities.js";
