/**
 * What this CLI needs from @soniq/core beyond what every version has, detected at run time so commands start
 * working the day core gains the API (names from DESIGN.md sections 8 and 9), and one place to read it.
 *
 * Three reads have no app-level API yet (workers, the task registry, migration status): `listWorkers`,
 * `listTaskNames` and `migrationStatus` below try an app method first, then the backend's facet shape
 * (`backend.workers.list()`), then today's flat backend method. Nothing else in the CLI touches the backend.
 */
import type { DeadLetterJob, Soniq, WorkerInfo } from "@soniq/core";
import { SONIQ_VERSION } from "@soniq/core";
import { CliError } from "./errors.js";

export interface QueueInfo {
  name: string;
  paused: boolean | null;
  concurrency: number | null;
  groupConcurrency: number | null;
  rateLimit: { max: number; perMs: number } | null;
  stats: Record<string, number>;
  lagMs: number | null;
}

/** A stored schedule, as core's `soniq.schedules.list()` returns it (`every` in milliseconds). */
export interface ScheduleInfo {
  name: string;
  jobName: string;
  cron: string | null;
  every: number | null;
  timezone: string | null;
  args: unknown;
  queue: string | null;
  priority: number | null;
  maxAttempts: number | null;
  catchUp: "none" | "latest" | { withinMs: number };
  paused: boolean;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastJobId: string | null;
  createdAt: Date;
}

/** The keys of a schedule in `--json` output, in this order. */
export const SCHEDULE_KEYS = [
  "name",
  "jobName",
  "cron",
  "every",
  "timezone",
  "args",
  "queue",
  "priority",
  "maxAttempts",
  "catchUp",
  "paused",
  "nextRunAt",
  "lastRunAt",
  "lastJobId",
  "createdAt",
] as const satisfies readonly (keyof ScheduleInfo)[];

/** A schedule with exactly the documented keys (a missing one is null). */
export function scheduleRow(s: ScheduleInfo): ScheduleInfo {
  const row: Record<string, unknown> = {};
  for (const key of SCHEDULE_KEYS) row[key] = s[key] ?? null;
  return row as unknown as ScheduleInfo;
}

export interface TickInfo {
  tickAt: Date;
  outcome: string;
  jobId: string | null;
  reason: string | null;
  recordedAt: Date;
}

export interface AuditEntry {
  id: string;
  at: Date;
  actor: string;
  action: string;
  target: string;
  params: unknown;
  outcome: string;
  details: unknown;
}

export interface Explanation {
  status: string | null;
  verdict: string;
  reasons: { code: string; message: string; evidence?: unknown }[];
}

type Actor = { actor?: string };

/** The operator API of DESIGN.md sections 8 and 9, each member optional until core ships it. */
export interface FutureApi {
  queues?: {
    list?: () => Promise<QueueInfo[]>;
    pause?: (name: string, o?: Actor) => Promise<unknown>;
    resume?: (name: string, o?: Actor) => Promise<unknown>;
    configure?: (name: string, settings: Record<string, unknown>, o?: Actor) => Promise<unknown>;
  };
  schedules?: {
    list?: () => Promise<ScheduleInfo[]>;
    get?: (name: string) => Promise<ScheduleInfo | null>;
    pause?: (name: string, o?: Actor) => Promise<boolean>;
    resume?: (name: string, o?: Actor) => Promise<boolean>;
    remove?: (name: string, o?: Actor) => Promise<boolean>;
    trigger?: (name: string, o?: Actor) => Promise<string>;
    upcoming?: (name: string, n: number) => Promise<Date[]>;
    history?: (name: string, o: { limit?: number }) => Promise<TickInfo[]>;
  };
  scheduler?: (options?: { checkIntervalMs?: number }) => {
    start(): Promise<void>;
    stop(): Promise<void>;
    readonly checkIntervalMs?: number;
  };
  explain?: (id: string) => Promise<Explanation>;
  audit?: { list?: (o: { limit?: number; action?: string; since?: Date }) => Promise<AuditEntry[]> };
  listWorkers?: () => Promise<WorkerInfo[]>;
  listTaskNames?: () => Promise<{ taskName: string; workerId: string; lastSeenAt: Date }[]>;
  migrationStatus?: () => Promise<{ applied: string[]; pending: string[] }>;
  workers?: { list?: () => Promise<WorkerInfo[]> };
}

export type App = Soniq & FutureApi;

/** The function at `path` on the app (bound), or an error naming what is missing. */
export function requireApi<F extends (...args: never[]) => unknown>(
  soniq: App,
  path: string,
  command: string,
): F {
  const parts = path.split(".");
  let owner: unknown = soniq;
  for (const part of parts.slice(0, -1)) owner = (owner as Record<string, unknown> | undefined)?.[part];
  const fn = (owner as Record<string, unknown> | undefined)?.[parts.at(-1) as string];
  if (typeof fn !== "function") {
    throw new CliError(
      "SONIQ_CLI_UNSUPPORTED",
      `${command} needs soniq.${path}(), which @soniq/core ${SONIQ_VERSION} does not have yet. Upgrade @soniq/core.`,
    );
  }
  return fn.bind(owner) as F;
}

export function has(soniq: App, path: string): boolean {
  try {
    requireApi(soniq, path, "");
    return true;
  } catch {
    return false;
  }
}

export const NO_SCHEDULER = (what: string): CliError =>
  new CliError(
    "SONIQ_CLI_UNSUPPORTED",
    `${what}: this Soniq version (@soniq/core ${SONIQ_VERSION}) has no scheduler (soniq.scheduler is missing). Upgrade @soniq/core.`,
  );

/**
 * Options for a write: `{ actor }` once core records an audit log (the API that accepts it ships with it);
 * before that core rejects unknown option keys, so nothing extra is passed.
 */
export function writeOptions(soniq: App, actor: string): { actor?: string } {
  return has(soniq, "audit.list") ? { actor } : {};
}

type Fn<T> = (() => Promise<T>) | undefined;

function firstOf<T>(candidates: [Fn<T>, unknown][], what: string): Promise<T> {
  for (const [fn, self] of candidates) if (typeof fn === "function") return fn.call(self);
  return Promise.reject(
    new CliError("SONIQ_CLI_UNSUPPORTED", `this @soniq/core ${SONIQ_VERSION} cannot list ${what}.`),
  );
}

interface LegacyBackend {
  workers?: { list?: () => Promise<WorkerInfo[]>; listTaskNames?: () => Promise<TaskName[]> };
  migrations?: { status?: () => Promise<{ applied: string[]; pending: string[] }> };
  listWorkers?: () => Promise<WorkerInfo[]>;
  listTaskNames?: () => Promise<TaskName[]>;
  migrationStatus?: () => Promise<{ applied: string[]; pending: string[] }>;
}
type TaskName = { taskName: string; workerId: string; lastSeenAt: Date };

export function listWorkers(soniq: App): Promise<WorkerInfo[]> {
  const b = soniq.backend as unknown as LegacyBackend;
  return firstOf<WorkerInfo[]>(
    [
      [soniq.listWorkers, soniq],
      [soniq.workers?.list, soniq.workers],
      [b.workers?.list, b.workers],
      [b.listWorkers, b],
    ],
    "workers",
  );
}

export function listTaskNames(soniq: App): Promise<TaskName[]> {
  const b = soniq.backend as unknown as LegacyBackend;
  return firstOf<TaskName[]>(
    [
      [soniq.listTaskNames, soniq],
      [b.workers?.listTaskNames, b.workers],
      [b.listTaskNames, b],
    ],
    "the task registry",
  );
}

export function migrationStatus(soniq: App): Promise<{ applied: string[]; pending: string[] }> {
  const b = soniq.backend as unknown as LegacyBackend;
  return firstOf(
    [
      [soniq.migrationStatus, soniq],
      [b.migrations?.status, b.migrations],
      [b.migrationStatus, b],
    ],
    "migration status",
  );
}

export type { DeadLetterJob };
