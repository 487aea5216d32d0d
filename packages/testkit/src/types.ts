/**
 * The testkit's public types: how a test runner is plugged in, what a backend author's harness
 * provides, and what a conformance case sees.
 */
import type {
  Backend,
  BackendCapabilities,
  BackendCapability,
  CompleteBackend,
  DeadLetterJob,
  GuardedBackend,
  Job,
  NewJob,
} from "@soniq/core/backend";

/** What a test body may do besides passing or throwing. */
export interface RunnerTestContext {
  /** Mark the running test skipped with a reason. The kit returns right after calling it. */
  skip(reason: string): void;
}

/**
 * The test runner, injected. `@soniq/testkit/vitest` ships one; any runner with suites and async
 * tests fits (node:test, mocha, jest, or a collecting adapter that runs cases programmatically).
 */
export interface TestRunner {
  describe(name: string, body: () => void): void;
  test(name: string, fn: (t: RunnerTestContext) => Promise<void>, timeoutMs: number): void;
}

/**
 * Reads and writes storage without going through the API under test, so cases can check state the
 * backend's own methods might misreport. Every method is optional; cases that need a missing one are not
 * registered, and `suite/applicability` lists them with a reason naming it.
 */
export interface BackendInspector {
  /** The `soniq_jobs` row with this id, read directly from storage; null when absent. */
  readJob?(id: string): Promise<Job | null>;
  /** The `soniq_dead_letter_jobs` row with this id, read directly from storage; null when absent. */
  readDeadLetterJob?(id: string): Promise<DeadLetterJob | null>;
  /**
   * Write `status` to the job's row the way raw storage access would (SQL: `UPDATE soniq_jobs SET
   * status = $2 WHERE id = $1`), translating storage errors as the backend does. Must reject with
   * `SONIQ_INVALID_STATUS_TRANSITION` for `dead_letter`, values outside the four, and terminal changes.
   */
  writeJobStatus?(id: string, status: string): Promise<void>;
  /** Move a worker's `last_heartbeat` `byMs` milliseconds into the past (stale-worker cases use it instead of sleeping). */
  backdateWorkerHeartbeat?(workerId: string, byMs: number): Promise<void>;
}

/** What the harness factory returns for one case: a fresh backend and the hooks it supports. */
export interface BackendHarness {
  /**
   * A fresh, unguarded or guarded backend. The kit guards it, runs `migrations.apply()`, and closes it after
   * the case. One case also calls the unguarded backend's `migrations.apply()` directly (twice), so a
   * migration that is not idempotent shows even though the guard runs it only once.
   */
  backend: Backend<unknown>;
  inspector?: BackendInspector;
  /**
   * Arm a one-shot fault: the next dead-letter move of `runs.settle` must fail between its two steps
   * (dead-letter row inserted, job row not yet deleted), the way the `interruptDeadLetterMove` fault of this
   * repository's backends does it (their `/testing` entries, e.g. `postgresBackendWithFaults`; Postgres: kill
   * the connection; SQLite: roll the transaction back; memory: throw and restore). The kit checks the call
   * rejects and nothing of it applied.
   */
  injectDeadLetterFault?: () => void | Promise<void>;
  /**
   * Open another backend instance on the same storage (another pool, another connection to the file), as a
   * second process would. Cases about what crosses instances (claims, wake-ups, leases) need it; the kit
   * guards, migrates and closes each peer. Omit it for backends whose storage is private to one instance.
   */
  openPeer?: () => Backend<unknown> | Promise<Backend<unknown>>;
  /** Runs after the case, after the kit closed the backend (drop a database, delete a file, ...). */
  cleanup?: () => void | Promise<void>;
}

export interface HarnessInfo {
  /** The case's stable id, e.g. `dlq/move-is-atomic`; handy for naming databases or files. */
  caseId: string;
}

/** Called once per case. */
export type HarnessFactory = (info: HarnessInfo) => BackendHarness | Promise<BackendHarness>;

/**
 * What a case needs from the harness. A case whose needs are not met is not registered (no test, not a
 * skipped one); `suite/applicability` lists it with every unmet need.
 */
export interface CaseRequirements {
  /** Capability values the case is written for (e.g. `{ transactionalEnqueue: false }`). */
  capabilities?: Partial<BackendCapabilities>;
  /**
   * The declared capabilities the case exercises (`flows`, `webhooks`, `schedules`, `queues`, `audit`, `metrics`,
   * `progress`). Cases of a capability the backend does not declare are not registered, and are listed as not
   * certified. The kit also fills this in from the case's area (`flows/...` needs `flows`; see `register.ts`).
   */
  declares?: readonly BackendCapability[];
  inspector?: readonly (keyof BackendInspector)[];
  deadLetterFault?: boolean;
  /** The case opens a second instance on the same storage (`harness.openPeer`). */
  peer?: boolean;
}

/** What a case body receives. */
export interface CaseContext {
  /**
   * The guarded backend under test, migrated. A capability facet the backend does not declare is there too, and
   * rejects with `SONIQ_UNSUPPORTED` (cases that use one declare it in `requires.declares`).
   */
  backend: GuardedBackend<unknown>;
  /**
   * The same backend without the guard (`unwrapBackend(harness.backend)`): calls reach it directly. Typed as
   * complete: a case reaches a capability facet only when it requires that capability.
   */
  rawBackend: CompleteBackend<unknown>;
  /** The harness's inspector; a method the harness lacks rejects (cases declare what they need). */
  inspector: Required<BackendInspector>;
  harness: BackendHarness;
  /** A queue name no other case uses (cases share storage on some backends). */
  queue(label?: string): string;
  /** A complete `NewJob` with a fresh id on this case's default queue, with overrides applied. */
  newJob(overrides?: Partial<NewJob>): NewJob;
  /** A fresh UUID. */
  id(): string;
  /** Run `fn` after the case, before the backend closes (e.g. unsubscribe). */
  defer(fn: () => unknown): void;
  /** A second guarded, migrated instance on the same storage; closed after the case. Needs `requires.peer`. */
  openPeer(): Promise<GuardedBackend<unknown>>;
}

export interface ConformanceCase<Id extends string = string> {
  /** Stable `area/behaviour` id; skips and reports refer to it. */
  readonly id: Id;
  /** One line: what a conforming backend does. */
  readonly title: string;
  readonly requires?: CaseRequirements;
  readonly run: (ctx: CaseContext) => Promise<void>;
}
