/**
 * Shared support for the cross-backend runtime tests: the backend matrix (memory; SQLite on a temp file
 * per test; PostgreSQL on one database per test file, created on DATABASE_URL and dropped WITH (FORCE)).
 * The memory-only runtime tests live beside core (packages/core/test).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryBackend } from "@soniq/backend-memory";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { type Backend, Soniq, type Worker } from "@soniq/core";
import { BACKEND_FACETS, type BackendFacetName } from "@soniq/core/backend";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";

export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

// The waiting and catching helpers are core's (its runtime tests use the same ones).
import { gate } from "../../core/test/support.js";

export { eventually, expectStaleThenReregistered, gate, rejection } from "../../core/test/support.js";

/** The most claim times in any window (t - perMs, t] ending at a claim (queue rate limits). */
export function maxStartsPerWindow(times: number[], perMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, from = 0; i < sorted.length; i++) {
    while ((sorted[from] as number) <= (sorted[i] as number) - perMs) from++;
    max = Math.max(max, i - from + 1);
  }
  return max;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}

export interface BackendKind {
  name: "memory" | "sqlite" | "postgres" | "postgres-pgbouncer";
  /** Called once per file, before the tests. */
  setup(): Promise<void>;
  /** A fresh backend over this kind's storage (a new SQLite file each time for sqlite; the file's database for postgres). */
  create(): Backend<unknown>;
  /** Another backend over the same storage as the last `create()` (a second process's view). */
  createPeer(): Backend<unknown>;
  /** The SQLite file or Postgres URL of the last `create()`, for a child process (not for memory). */
  target(): string;
  teardown(): Promise<void>;
  /** What the kind's own processes logged (the private PgBouncer's log), printed when a fault figure is off. */
  log?(): string;
}

export function memoryKind(): BackendKind {
  let last: Backend<unknown> | undefined;
  return {
    name: "memory",
    async setup() {},
    create() {
      last = memoryBackend();
      return last;
    },
    createPeer() {
      // One process, one store: the memory backend has no second view; peers share the object.
      if (!last) throw new Error("create() first");
      return last;
    },
    target() {
      throw new Error("the memory backend cannot be shared with another process");
    },
    async teardown() {},
  };
}

export function sqliteKind(): BackendKind {
  let dir: string | undefined;
  let file = "";
  return {
    name: "sqlite",
    async setup() {
      dir = mkdtempSync(join(tmpdir(), "soniq-runtime-"));
    },
    create() {
      file = join(dir as string, `${uniqueName("t")}.db`);
      return sqliteBackend({ filename: file });
    },
    createPeer() {
      return sqliteBackend({ filename: file });
    },
    target: () => file,
    async teardown() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function postgresKind(): BackendKind {
  const name = uniqueName("soniq_t");
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    name: "postgres",
    setup: () => admin(`CREATE DATABASE ${name}`),
    create: () => postgresBackend({ connectionString: url.toString() }),
    createPeer: () => postgresBackend({ connectionString: url.toString() }),
    target: () => url.toString(),
    teardown: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export const ALL_KINDS = [memoryKind, sqliteKind, postgresKind];

/**
 * A backend with faults switched on from the test: after `kill()` every facet call fails (the process is
 * gone; close() still works) until `revive()` (for a quick cleanup); `failing` holds "facet.method" names
 * whose calls fail meanwhile.
 */
export function killable(backend: Backend<unknown>): {
  backend: Backend<unknown>;
  kill: () => void;
  revive: () => void;
  failing: Set<string>;
} {
  let dead = false;
  const failing = new Set<string>();
  const wrapped: Record<string, unknown> = { ...backend };
  for (const facet of Object.keys(BACKEND_FACETS) as BackendFacetName[]) {
    const methods: Record<string, unknown> = {};
    for (const [name, fn] of Object.entries(
      backend[facet] as unknown as Record<string, (...args: unknown[]) => unknown>,
    )) {
      const label = `${facet}.${name}`;
      methods[name] = (...args: unknown[]) => {
        if (dead) return Promise.reject(new Error("the worker process is gone"));
        if (failing.has(label)) return Promise.reject(new Error(`${label} failed (injected)`));
        return fn(...args);
      };
    }
    wrapped[facet] = methods;
  }
  return {
    backend: wrapped as unknown as Backend<unknown>,
    kill: () => {
      dead = true;
    },
    revive: () => {
      dead = false;
    },
    failing,
  };
}

/** What the matrix tests of one backend share: a fresh queue per test, and instances closed after it. */
export interface MatrixHarness {
  readonly kind: BackendKind;
  /** A fresh queue name for the current test. */
  readonly queue: string;
  /** A set-up Soniq on `backend` (default: a new one of the kind), closed after the test. */
  app(backend?: Backend<unknown>): Promise<Soniq>;
  /** Starts `worker`; it is stopped after the test. */
  started(worker: Worker): Promise<Worker>;
  /** Runs `cleanup` after the test (in reverse order of registration). */
  defer(cleanup: () => Promise<unknown>): void;
  /**
   * Two instances over one store for a "process dies mid-job" scenario: A (killable) runs `jobName` by
   * hanging (`hung` opens once it started), B finishes it ("recovered on attempt N") and, unless `keeper`
   * is false, runs a maintenance worker that holds the lease and declares workers stale after 300 ms.
   */
  dyingPair(jobName: string, options?: { keeper?: boolean }): Promise<DyingPair>;
}

export interface DyingPair {
  a: ReturnType<typeof killable>;
  soniqA: Soniq;
  soniqB: Soniq;
  hung: ReturnType<typeof gate<void>>;
}

/** Registers the hooks in the calling `describe` block and returns the harness. */
export function matrixHarness(make: () => BackendKind): MatrixHarness {
  const kind = make();
  const cleanups: (() => Promise<unknown>)[] = [];
  let queue = "";
  beforeAll(() => kind.setup(), 30_000);
  afterAll(() => kind.teardown(), 30_000);
  beforeEach(() => {
    queue = uniqueName("q");
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    kind,
    get queue() {
      return queue;
    },
    async app(backend = kind.create()) {
      const soniq = new Soniq({ backend });
      cleanups.push(() => soniq.close());
      await soniq.setup();
      return soniq;
    },
    async started(worker) {
      cleanups.push(() => worker.stop());
      await worker.start();
      return worker;
    },
    defer(cleanup) {
      cleanups.push(cleanup);
    },
    async dyingPair(jobName, { keeper: withKeeper = true } = {}) {
      const a = killable(kind.create());
      const soniqA = await this.app(a.backend);
      const soniqB = await this.app(kind.createPeer());
      const hung = gate();
      soniqA.job(
        jobName,
        () => {
          hung.open();
          return new Promise(() => {});
        },
        { queue },
      );
      soniqB.job(jobName, async (_args, ctx) => `recovered on attempt ${ctx.attempt}`, { queue });
      if (!withKeeper) return { a, soniqA, soniqB, hung };
      const keeper = await this.started(
        soniqB.worker({
          queues: [uniqueName("idle")],
          heartbeatIntervalMs: 50,
          staleAfterMs: 300,
          maintenanceIntervalMs: 100,
        }),
      );
      // Taking the lease in the keeper's name makes sure it holds it before the test's worker starts.
      if (!(await soniqB.backend.leases.tryAcquire("soniq.maintenance", keeper.id, 1000))) {
        throw new Error("the keeper could not take the maintenance lease");
      }
      return { a, soniqA, soniqB, hung };
    },
  };
}
