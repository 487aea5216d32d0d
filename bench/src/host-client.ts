/** The parent's handle on a worker host child: typed calls over IPC, the all-started event, cleanup. */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { HostCall, HostMessage, StartReport } from "./host-protocol.js";
import { node24 } from "./node24.js";
import type { ProduceRequest, ProduceResult, ProducerHandle } from "./producer.js";
import type { Counts, QueueLimit, StepCounts, SystemTarget, TaskKind } from "./systems/types.js";

/**
 * `pnpm bench` runs the compiled harness (`dist/`) on plain Node, so the measured child loads Soniq's built
 * `dist/` as users do (no tsx loader hooks, no source-map work when a stack is built). Run from source (the
 * tests, `tsx src/main.ts`), the child loads the workspace's `src/` through tsx instead.
 */
const FROM_SOURCE = import.meta.url.endsWith(".ts");
const HOST_ENTRY = fileURLToPath(
  new URL(FROM_SOURCE ? "./worker-host.ts" : "./worker-host.js", import.meta.url),
);
/** Diagnostics: `BENCH_CPU_PROF=<dir>` writes a V8 CPU profile of every worker host into that folder. */
const PROFILE_ARGV = process.env.BENCH_CPU_PROF
  ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
  : [];
const HOST_EXEC_ARGV = [...(FROM_SOURCE ? ["--conditions=source", "--import", "tsx"] : []), ...PROFILE_ARGV];

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

export class HostClient {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exited: Error | null = null;
  private allStarted: { at: number } | null = null;
  private allStartedWaiters: ((at: number) => void)[] = [];

  /**
   * Starts the child at once; it loads the system's modules while the parent prepares the database. On
   * `runtime` "node24" the child runs on Node 24 (`node24.ts`).
   */
  constructor(systemId: string, runtime?: "node24") {
    const other = runtime === "node24" ? node24() : null;
    this.child = fork(HOST_ENTRY, [systemId], {
      execArgv: [...(other?.execArgv ?? []), ...HOST_EXEC_ARGV],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      ...(other ? { execPath: other.execPath, env: { ...process.env, ...other.env } } : {}),
    });
    this.child.on("message", (m: HostMessage) => this.onMessage(m));
    // A message that could not be sent (the child is gone): the calls waiting on it fail, the bench goes on.
    this.child.on("error", (err) => this.gone(err));
    this.child.on("exit", (code, signal) => {
      this.gone(new Error(`worker host exited (code ${code}, signal ${signal})`));
    });
  }

  private gone(err: Error): void {
    this.exited ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Opens the system's session in the child (once the database is ready). */
  async open(systemId: string, target: SystemTarget): Promise<void> {
    await this.call({ op: "open", systemId, target });
  }

  private onMessage(m: HostMessage): void {
    if (m.type === "all-started") {
      this.allStarted = { at: m.at };
      for (const w of this.allStartedWaiters) w(m.at);
      this.allStartedWaiters = [];
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`worker host: ${m.error}`));
  }

  call(call: HostCall): Promise<unknown> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, call });
    });
  }

  async track(kind: TaskKind, n: number, recordTimes: boolean, shared = false): Promise<void> {
    this.allStarted = null;
    await this.call({ op: "track", kind, n, recordTimes, shared });
  }

  /** Resolves with the time the last expected job started, or rejects after `timeoutMs`. */
  waitAllStarted(timeoutMs: number): Promise<number> {
    if (this.allStarted) return Promise.resolve(this.allStarted.at);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`not every job started within ${timeoutMs} ms`)),
        timeoutMs,
      );
      timer.unref();
      this.allStartedWaiters.push((at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  /** Runs the system's `prepare` in the child. */
  async prepare(systemId: string, target: SystemTarget): Promise<void> {
    await this.call({ op: "prepare", systemId, target });
  }

  /** The child's CPU seconds so far (every thread). */
  async cpuSeconds(): Promise<number> {
    return (await this.call({ op: "cpu" })) as number;
  }

  async report(): Promise<StartReport> {
    return (await this.call({ op: "report" })) as StartReport;
  }

  /** The producer side, run inside the child (in-process systems). */
  producer(): ProducerHandle {
    return {
      produce: async (req: ProduceRequest) => (await this.call({ op: "produce", req })) as ProduceResult,
      counts: async (kind: TaskKind) => (await this.call({ op: "counts", kind })) as Counts,
      settled: async (kind: TaskKind) => (await this.call({ op: "settled", kind })) as boolean,
      limitQueue: async (limit: QueueLimit) => {
        await this.call({ op: "limitQueue", limit });
      },
      stepCounts: async (kind: TaskKind) => (await this.call({ op: "stepCounts", kind })) as StepCounts,
      close: async () => {},
    };
  }

  /**
   * Closes the session and waits for the child to exit; kills it if it does not within 15 s. Returns the
   * child's incidents (incidents.ts); a child that had to be killed, or was gone already, is one.
   */
  async close(): Promise<string[]> {
    if (this.exited) {
      this.kill();
      return [`worker host: ${this.exited.message}`];
    }
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    const timer = setTimeout(() => this.kill(), 15_000);
    timer.unref();
    let incidents: string[];
    try {
      incidents = (await this.call({ op: "close" })) as string[];
    } catch (err) {
      incidents = [`worker host did not close: ${err instanceof Error ? err.message : String(err)}`];
      this.kill();
    }
    await exited;
    clearTimeout(timer);
    return incidents;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}
