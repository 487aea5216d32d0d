/**
 * Leader leases through session-level advisory locks (`pg_try_advisory_lock`) held on one dedicated
 * connection. A lease lasts as long as that session: it is released by `release`, by `close`, or by
 * Postgres when the connection dies (so a crashed leader frees the lease at once; `ttlMs` is not needed
 * to expire it). Advisory locks are re-entrant per session, so this class tracks which holder owns each
 * name and serialises its calls; a different holder in the same process is refused like any other.
 */
import pg from "pg";
import { translatePgError } from "./errors.js";

export class AdvisoryLeases {
  private client: pg.Client | undefined;
  private readonly held = new Map<string, string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: pg.ClientConfig) {}

  tryAcquire(name: string, holder: string): Promise<boolean> {
    return this.serialised(async () => {
      const owner = this.held.get(name);
      if (owner !== undefined && owner !== holder) return false;
      if (owner === holder && (await this.sessionAlive())) return true;
      const client = await this.connection();
      const res = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok",
        [lockKey(name)],
      );
      const ok = res.rows[0]?.ok === true;
      if (ok) this.held.set(name, holder);
      return ok;
    }, "tryAcquireLease");
  }

  release(name: string, holder: string): Promise<void> {
    return this.serialised(async () => {
      if (this.held.get(name) !== holder) return;
      this.held.delete(name);
      if (!this.client) return;
      await this.client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [lockKey(name)]);
    }, "releaseLease");
  }

  /** Ending the session releases every lock it holds. */
  close(): Promise<void> {
    return this.serialised(async () => {
      const client = this.client;
      this.forget();
      if (client) await client.end().catch(() => {});
    }, "close");
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
    this.held.clear();
  }
}

function lockKey(name: string): string {
  return `soniq.lease:${name}`;
}
