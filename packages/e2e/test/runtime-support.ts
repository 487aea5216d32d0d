/**
 * Shared support for the runtime tests: the backend matrix (memory; SQLite on a temp file per test;
 * PostgreSQL on one database per test file, created on DATABASE_URL and dropped WITH (FORCE)),
 * a bounded `eventually`, a gate for handlers that must wait for the test, and the memory-backend `app()`
 * the single-backend runtime tests share.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryBackend } from "@soniq/backend-memory";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { type Backend, Soniq, type SoniqOptions, type Worker } from "@soniq/core";
import pg from "pg";
import { afterEach, expect } from "vitest";

export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Polls `fn` until it stops throwing; fails with the last error after `timeoutMs`. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A promise the test resolves by hand, to hold a handler where the test wants it. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** The error `p` rejects with; throws if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

/**
 * Call at a test file's top level: returns `app(options, backend)`, which makes a `Soniq` on a fresh
 * memory backend (or the one given) and closes it after the test.
 */
export function memoryApps(): (options?: Partial<SoniqOptions>, backend?: Backend<unknown>) => Soniq {
  const open: Soniq[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return (options = {}, backend = memoryBackend()) => {
    const soniq = new Soniq({ backend, ...options });
    open.push(soniq);
    return soniq;
  };
}

/**
 * Has a peer declare `worker` stale (a 1 ms threshold) and waits until the worker learnt it
 * (`worker:stale`) and re-registered itself as active.
 */
export async function expectStaleThenReregistered(soniq: Soniq, worker: Worker): Promise<void> {
  const stale = gate<string>();
  worker.on("worker:stale", ({ workerId }) => stale.open(workerId));
  await eventually(async () => {
    expect((await soniq.backend.recoverStaleWorkers(1)).workerIds).toContain(worker.id);
  });
  expect(await stale.promise).toBe(worker.id);
  await eventually(async () => {
    const row = (await soniq.backend.listWorkers()).find((w) => w.id === worker.id);
    expect(row?.status).toBe("active");
  });
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}

export interface BackendKind {
  name: "memory" | "sqlite" | "postgres";
  /** Called once per file, before the tests. */
  setup(): Promise<void>;
  /** A fresh backend over this kind's storage (a new SQLite file each time for sqlite; the file's database for postgres). */
  create(): Backend<unknown>;
  /** Another backend over the same storage as the last `create()` (a second process's view). */
  createPeer(): Backend<unknown>;
  /** The SQLite file or Postgres URL of the last `create()`, for a child process (not for memory). */
  target(): string;
  teardown(): Promise<void>;
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
