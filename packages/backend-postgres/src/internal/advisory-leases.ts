/**
 * Leader leases through session-level advisory locks (`pg_try_advisory_lock`) held on one dedicated
 * connection. A lease ends when its holder releases it, when `ttlMs` passes without a renewal (a local
 * timer, unref'd, unlocks it), on `close`, or when the connection dies (Postgres drops the session's locks,
 * so a crashed leader frees its lease at once, without waiting for the TTL).
 * Advisory locks are re-entrant per session, so this class tracks which holder owns each name and
 * serialises its calls; a different holder in the same process is refused like any other, unless it passes
 * `takeOver` and the holder is a worker that is stopped or stale by the taker's threshold: then the lease
 * (the session's lock) passes to it. A holder in another process keeps its lock while its session lives; a
 * killed process's session ends with it, which frees the lock at once.
 */
import type { LeaseTakeOver } from "@soniq/core/backend";
import pg from "pg";
import { translatePgError } from "./errors.js";

interface HeldLease {
  holder: string;
  expiry: NodeJS.Timeout;
}

export class AdvisoryLeases {
  private client: pg.Client | undefined;
  private readonly held = new Map<string, HeldLease>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: pg.ClientConfig) {}

  tryAcquire(name: string, holder: string, ttlMs: number, takeOver?: LeaseTakeOver): Promise<boolean> {
    return this.serialised(async () => {
      const owner = this.held.get(name)?.holder;
      if (owner !== undefined && owner !== holder) {
        if (takeOver === undefined || !(await this.workerGone(owner, takeOver))) return false;
        this.hold(name, holder, ttlMs);
        return true;
      }
      if (owner === holder && (await this.sessionAlive())) {
        this.hold(name, holder, ttlMs);
        return true;
      }
      const client = await this.connection();
      const res = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok",
        [lockKey(name)],
      );
      const ok = res.rows[0]?.ok === true;
      if (ok) this.hold(name, holder, ttlMs);
      return ok;
    }, "leases.tryAcquire");
  }

  release(name: string, holder: string): Promise<void> {
    return this.serialised(async () => {
      const lease = this.held.get(name);
      if (lease?.holder !== holder) return;
      clearTimeout(lease.expiry);
      this.held.delete(name);
      if (!this.client) return;
      await this.client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [lockKey(name)]);
    }, "leases.release");
  }

  /** (Re)start the lease's TTL: unless renewed in time, the holder's lease is released. */
  private hold(name: string, holder: string, ttlMs: number): void {
    const previous = this.held.get(name);
    if (previous) clearTimeout(previous.expiry);
    const expiry = setTimeout(() => {
      this.release(name, holder).catch(() => {
        // The session is gone or going; Postgres frees its locks with it.
      });
    }, ttlMs);
    expiry.unref();
    this.held.set(name, { holder, expiry });
  }

  /** Ending the session releases every lock it holds. */
  close(): Promise<void> {
    return this.serialised(async () => {
      const client = this.client;
      this.forget();
      if (client) await client.end().catch(() => {});
    }, "leases.close");
  }

  private async serialised<T>(fn: () => Promise<T>, operation: string): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    try {
      return await run;
    } catch (err) {
      throw translatePgError(err, operation);
    }
  }

  /** Whether `workerId` is a stopped worker or one whose heartbeat is older than the taker's threshold. */
  private async workerGone(workerId: string, takeOver: LeaseTakeOver): Promise<boolean> {
    const client = await this.connection();
    const res = await client.query(
      `SELECT 1 FROM soniq_workers WHERE id::text = $1
        AND (status = 'stopped' OR last_heartbeat < now() - make_interval(secs => $2::float8 / 1000))`,
      [workerId, takeOver.staleAfterMs],
    );
    return res.rowCount === 1;
  }

  /** A renewal proves the session (and so the lock) still exists; a dead session lost every lease. */
  private async sessionAlive(): Promise<boolean> {
    try {
      await this.client?.query("SELECT 1");
      return this.client !== undefined;
    } catch {
      this.dropConnection();
      return false;
    }
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client(this.config);
    client.on("error", () => {
      if (this.client === client) this.dropConnection();
    });
    client.on("end", () => {
      if (this.client === client) this.forget();
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private dropConnection(): void {
    const client = this.client;
    this.forget();
    client?.end().catch(() => {});
  }

  private forget(): void {
    this.client = undefined;
    for (const lease of this.held.values()) clearTimeout(lease.expiry);
    this.held.clear();
  }
}

function lockKey(name: string): string {
  return `soniq.lease:${name}`;
}
