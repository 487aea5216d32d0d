import { auditCases } from "./audit.js";
import { claimCases } from "./claim.js";
import { claimLimitCases } from "./claim-limits.js";
import { deadLetterCases } from "./dead-letter.js";
import { dedupCases } from "./dedup.js";
import { enqueueCases } from "./enqueue.js";
import { filterCases } from "./filters.js";
import { flowFailureCases } from "./flow-failures.js";
import { flowFinishedCases } from "./flow-finished.js";
import { flowReleaseCases } from "./flow-release.js";
import { flowCases } from "./flows.js";
import { jobsCases } from "./jobs.js";
import { leaseTakeoverCases } from "./lease-takeover.js";
import { leaseCases } from "./leases.js";
import { lifecycleCases } from "./lifecycle.js";
import { pagingCases } from "./paging.js";
import { peerCases } from "./peers.js";
import { progressCases } from "./progress.js";
import { queueRateWindowCases } from "./queue-rate-window.js";
import { queueCases } from "./queues.js";
import { scheduleCases } from "./schedules.js";
import { settleCases } from "./settle.js";
import { settleFenceCases } from "./settle-fence.js";
import { statsCases } from "./stats.js";
import { stepCases } from "./steps.js";
import { subscribeCases } from "./subscribe.js";
import { traceCases } from "./trace.js";
import { upgradeCases, versionCases } from "./versions.js";
import { webhookAttemptCases } from "./webhook-attempts.js";
import { webhookCases } from "./webhooks.js";
import { workerCases } from "./workers.js";

/** Every conformance case, in the order they run. */
export const CONFORMANCE_CASES = [
  ...lifecycleCases,
  ...enqueueCases,
  ...dedupCases,
  ...claimCases,
  ...settleCases,
  ...settleFenceCases,
  ...deadLetterCases,
  ...statsCases,
  ...jobsCases,
  ...pagingCases,
  ...filterCases,
  ...workerCases,
  ...versionCases,
  ...upgradeCases,
  ...leaseCases,
  ...leaseTakeoverCases,
  ...scheduleCases,
  ...subscribeCases,
  ...progressCases,
  ...peerCases,
  ...queueCases,
  ...queueRateWindowCases,
  ...claimLimitCases,
  ...auditCases,
  ...flowCases,
  ...flowReleaseCases,
  ...flowFailureCases,
  ...flowFinishedCases,
  ...traceCases,
  ...stepCases,
  ...webhookCases,
  ...webhookAttemptCases,
] as const;

export type ConformanceCaseId = (typeof CONFORMANCE_CASES)[number]["id"];
