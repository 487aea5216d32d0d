/**
 * The worker host: a child process that opens one session of a system, builds its worker, and reports
 * every handler start (counted locally; only a summary and the optional start times cross IPC, so the
 * reporting costs the worker next to nothing). In-process systems also run their producer here.
 */
import { now } from "./clock.js";
import type { HostCall, HostMessage, HostRequest, StartReport, StepReport } from "./host-protocol.js";
import { isPgError, recordIncident, takeIncidents } from "./incidents.js";
import { configureLimit, produce, readStepCounts } from "./producer.js";
import { tallyStarts } from "./start-report.js";
import { findSystem } from "./systems/index.js";
import {
  type BenchWorker,
  runsPerJob,
  STEPS_PER_JOB,
  type SystemSession,
  type TaskKind,
} from "./systems/types.js";

class StartTracker {
  private counts: Uint32Array;
  private times: Float64Array | null;
  private distinct = 0;
  private unexpected = 0;
  private first: number | null = null;
  private last: number | null = null;
  /** W9: per (job, step), how many times the step's function ran. */
  private readonly stepRuns: Uint8Array | null;
  /** W9s: per job, its first run (0: none yet); every job's end-of-sleep time is kept in `times`. */
  private readonly runAt: Float64Array | null;
  private runs = 0;
  private running = 0;
  private maxRunning = 0;
  private firstRun: number | null = null;

  constructor(
    readonly kind: TaskKind,
    readonly n: number,
    recordTimes: boolean,
    private readonly shared: boolean,
    private readonly onAllStarted: (at: number) => void,
  ) {
    this.counts = new Uint32Array(n);
    this.times = recordTimes || kind === "sleep" ? new Float64Array(n) : null;
    this.stepRuns = kind === "steps" ? new Uint8Array(n * STEPS_PER_JOB) : null;
    this.runAt = kind === "sleep" ? new Float64Array(n) : null;
  }

  /** W9: step `k` of job `i` ran its function. */
  step(i: number, k: number): void {
    const at = i * STEPS_PER_JOB + k;
    if (!this.stepRuns || !Number.isInteger(at) || i < 0 || i >= this.n || k < 0 || k >= STEPS_PER_JOB) {
      this.unexpected++;
      return;
    }
    this.stepRuns[at] = Math.min(255, (this.stepRuns[at] ?? 0) + 1);
  }

  /** W9s: a run of job `i` began. */
  run(i: number): void {
    const at = now();
    if (!this.runAt || !Number.isInteger(i) || i < 0 || i >= this.n) {
      this.unexpected++;
      return;
    }
    this.runs++;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    this.firstRun ??= at;
    if (this.runAt[i] === 0) this.runAt[i] = at;
  }

  /** W9s: a run of job `i` ended. */
  runEnd(): void {
    this.running--;
  }

  private stepReport(): StepReport | null {
    if (this.stepRuns) {
      let runs = 0;
      let notOnce = 0;
      for (const c of this.stepRuns) {
        runs += c;
        if (c !== 1) notOnce++;
      }
      return {
        stepRuns: runs,
        stepsNotOnce: notOnce,
        runs: 0,
        firstRunAt: null,
        minSleptMs: null,
        maxRunning: 0,
        firstRunsSpanMs: null,
        medianSleptMs: null,
      };
    }
    if (this.runAt && this.times) {
      const slept: number[] = [];
      let lastRun: number | null = null;
      for (let i = 0; i < this.n; i++) {
        const ran = this.runAt[i] ?? 0;
        if (ran !== 0) lastRun = lastRun === null ? ran : Math.max(lastRun, ran);
        const woke = this.times[i] ?? 0;
        if (ran !== 0 && woke !== 0) slept.push(woke - ran);
      }
      slept.sort((a, b) => a - b);
      const minSlept = slept.length > 0 ? (slept[0] as number) : null;
      return {
        stepRuns: 0,
        stepsNotOnce: 0,
        runs: this.runs,
        firstRunAt: this.firstRun,
        minSleptMs: minSlept,
        maxRunning: this.maxRunning,
        firstRunsSpanMs: lastRun !== null && this.firstRun !== null ? lastRun - this.firstRun : null,
        medianSleptMs: slept.length > 0 ? (slept[Math.floor(slept.length / 2)] as number) : null,
      };
    }
    return null;
  }

  record(kind: TaskKind, i: number): void {
    const at = now();
    if (kind !== this.kind || !Number.isInteger(i) || i < 0 || i >= this.n) {
      this.unexpected++;
      return;
    }
    this.first ??= at;
    this.last = at;
    const seen = this.counts[i] ?? 0;
    this.counts[i] = seen + 1;
    if (seen > 0) return;
    if (this.times) this.times[i] = at;
    this.distinct++;
    if (this.distinct === this.n) this.onAllStarted(at);
  }

  report(): StartReport {
    const runs = runsPerJob(this.kind);
    return {
      expected: this.n,
      runsPerJob: runs,
      ...tallyStarts(this.counts, runs),
      unexpected: this.unexpected,
      firstStartAt: this.first,
      lastStartAt: this.last,
      startTimes: this.times ? Array.from(this.times) : null,
      startCounts: this.shared ? Array.from(this.counts) : null,
      steps: this.stepReport(),
    };
  }
}

let session: SystemSession | null = null;
let worker: BenchWorker | null = null;
let tracker: StartTracker | null = null;

function send(message: HostMessage, then?: () => void): void {
  process.send?.(message, undefined, undefined, () => then?.());
}

function requireSession(): SystemSession {
  if (!session) throw new Error("worker host: no session open");
  return session;
}

async function execute(call: HostCall): Promise<unknown> {
  switch (call.op) {
    case "open":
      session = await findSystem(call.systemId).open(call.target);
      return null;
    case "prepare":
      await findSystem(call.systemId).prepare(call.target);
      return null;
    case "cpu": {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    }
    case "track":
      tracker = new StartTracker(call.kind, call.n, call.recordTimes, call.shared, (at) =>
        send({ type: "all-started", at }),
      );
      return null;
    case "createWorker":
      worker = await requireSession().createWorker({
        concurrency: call.concurrency,
        onStart: (kind, i) => tracker?.record(kind, i),
        onStep: (i, k) => tracker?.step(i, k),
        onRun: (i) => tracker?.run(i),
        onRunEnd: () => tracker?.runEnd(),
      });
      return null;
    case "startWorker":
      await worker?.start();
      return now();
    case "stopWorker":
      await worker?.stop();
      worker = null;
      return null;
    case "report":
      return tracker?.report() ?? null;
    case "produce":
      return produce(requireSession(), call.req);
    case "counts":
      return requireSession().counts(call.kind);
    case "settled":
      return requireSession().settled(call.kind);
    case "limitQueue":
      return configureLimit(requireSession(), call.limit);
    case "stepCounts":
      return readStepCounts(requireSession(), call.kind);
    case "incidents":
      return takeIncidents();
    case "close":
      await worker?.stop();
      worker = null;
      await session?.close();
      session = null;
      // What went wrong while stopping and closing still belongs to this measurement.
      return takeIncidents();
  }
}

// Load the system's modules right away, while the parent creates and migrates the database.
const preloadId = process.argv[2];
// A failure here resurfaces (with its message) when "open" imports the same modules.
if (preloadId)
  findSystem(preloadId)
    .preload?.()
    .catch(() => {});

// A pg error nothing caught (an 'error' event of a connection inside a library): the measurement is INVALID,
// the process survives so the parent can still stop, check and close it. Anything else is a bug: crash.
process.on("uncaughtException", (err) => {
  if (isPgError(err)) {
    recordIncident("uncaught in the worker host", err);
    return;
  }
  process.stderr.write(`worker host: ${err.stack ?? err.message}\n`);
  process.exit(1);
});

process.on("message", (raw: HostRequest) => {
  execute(raw.call).then(
    // After "close" nothing may keep the process alive (a library's stray timer): exit once answered.
    (value) =>
      send({ type: "result", id: raw.id, ok: true, value: value ?? null }, () => {
        if (raw.call.op === "close") process.exit(0);
      }),
    (err: unknown) =>
      send({
        type: "result",
        id: raw.id,
        ok: false,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      }),
  );
});
