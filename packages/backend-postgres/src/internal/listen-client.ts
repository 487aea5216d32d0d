/**
 * Wake-ups through LISTEN on one dedicated connection (never a pooled one: a pooled connection would be
 * handed to other queries and lose its LISTEN). States:
 * - idle: no subscribers, no connection.
 * - connecting -> listening: the first subscribe connects and runs LISTEN; subscribe resolves once listening.
 * - listening -> reconnecting: the connection fails or ends; a reconnect is scheduled with capped, jittered
 *   backoff (timer unref'd) while subscribers remain. Wake-ups are hints; the worker's polling covers the gap.
 * - last unsubscribe or close -> idle: the connection is ended.
 * One connection serves both kinds of subscriber: new work (`soniq_new_job`, payload a queue) and finished
 * jobs (`soniq_job_finished`, payload comma-separated job ids; `waitFor` listens to it). It stays up while
 * either kind has a subscriber, and LISTENs only on the channels that have one (`syncChannels`), so a
 * worker's connection never receives the finished ids nobody in its process waits for.
 * Modes (`listen`): "notify" listens as above; "poll" never connects (subscribe resolves, nothing is
 * dispatched); "auto" listens and, on the first connection, proves that a NOTIFY sent through the pool
 * arrives (it does not through a transaction-mode pooler, which hands the LISTEN's server connection to
 * others). A failed probe is remembered: every subscribe then rejects with it, each worker logs one
 * warning and polls.
 */
import { randomUUID } from "node:crypto";
import { type FinishedListener, SoniqError, type WakeUpListener } from "@soniq/core/backend";
import pg from "pg";
import type { PostgresListenMode } from "../options.js";
import { translatePgError } from "./errors.js";

export const NEW_JOB_CHANNEL = "soniq_new_job";
/** Jobs that finished (done, dead letter, cancelled): comma-separated ids, sent by settle and cancel. */
export const FINISHED_CHANNEL = "soniq_job_finished";
/** Ids per finished NOTIFY: 37 bytes each keeps a payload under Postgres's 8000-byte limit. */
export const FINISHED_IDS_PER_NOTIFY = 200;
const PROBE_CHANNEL = "soniq_listen_probe";
const PROBE_TIMEOUT_MS = 3000;

/** Sends `pg_notify(channel, payload)` the way enqueues do (through the pool). */
export type Notify = (channel: string, payload: string) => Promise<void>;

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

export class WakeUpChannel {
  private readonly listeners = new Set<WakeUpListener>();
  private readonly finishedListeners = new Set<FinishedListener>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = MIN_BACKOFF_MS;
  private closed = false;
  private probe: "pending" | "passed" | SoniqError;
  /** The channels the current client LISTENs on. */
  private listening = new Set<string>();
  /** LISTEN / UNLISTEN changes, one at a time. */
  private syncing: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly mode: PostgresListenMode,
    private readonly notify: Notify,
  ) {
    this.probe = mode === "auto" ? "pending" : "passed";
  }

  subscribe(listener: WakeUpListener): Promise<() => Promise<void>> {
    // A wrapper per subscription, so subscribing the same function twice needs two unsubscribes.
    return this.add(this.listeners, (queue: string) => listener(queue));
  }

  subscribeFinished(listener: FinishedListener): Promise<() => Promise<void>> {
    return this.add(this.finishedListeners, (ids: readonly string[]) => listener(ids));
  }

  private async add<L>(set: Set<L>, listener: L): Promise<() => Promise<void>> {
    if (this.mode === "poll") return async () => {};
    if (this.probe instanceof SoniqError) throw this.probe;
    set.add(listener);
    try {
      await this.ensureListening();
      await this.syncChannels();
    } catch (err) {
      set.delete(listener);
      throw err instanceof SoniqError ? err : translatePgError(err, "subscribe");
    }
    let active = true;
    return async () => {
      if (!active) return;
      active = false;
      set.delete(listener);
      if (this.subscribers === 0) await this.disconnect();
      else await this.syncChannels().catch(() => {});
    };
  }

  /** The channels that have subscribers. */
  private wanted(): string[] {
    return [
      ...(this.listeners.size > 0 ? [NEW_JOB_CHANNEL] : []),
      ...(this.finishedListeners.size > 0 ? [FINISHED_CHANNEL] : []),
    ];
  }

  /** LISTENs on the channels that gained subscribers, UNLISTENs the ones that lost them. */
  private syncChannels(): Promise<void> {
    const next = this.syncing.then(async () => {
      const client = this.client;
      if (!client) return;
      const wanted = new Set(this.wanted());
      const statements = [
        ...[...wanted].filter((c) => !this.listening.has(c)).map((c) => `LISTEN ${c}`),
        ...[...this.listening].filter((c) => !wanted.has(c)).map((c) => `UNLISTEN ${c}`),
      ];
      if (statements.length === 0) return;
      await client.query(statements.join("; "));
      if (this.client === client) this.listening = wanted;
    });
    this.syncing = next.catch(() => {});
    return next;
  }

  private get subscribers(): number {
    return this.listeners.size + this.finishedListeners.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.finishedListeners.clear();
    await this.disconnect();
  }

  private ensureListening(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on("notification", (message) => {
      if (message.channel === NEW_JOB_CHANNEL) this.dispatch(message.payload ?? "");
      else if (message.channel === FINISHED_CHANNEL) this.dispatchFinished(message.payload ?? "");
    });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      // New work is always listened to first (the probe's round trip goes with it); the rest is synced.
      await client.query(`LISTEN ${NEW_JOB_CHANNEL}`);
      if (this.probe === "pending") await this.roundTrip(client);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    if (this.closed || this.subscribers === 0) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.listening = new Set([NEW_JOB_CHANNEL]);
    this.backoffMs = MIN_BACKOFF_MS;
    // Reconnected with subscribers already waiting: listen where they need it (add() does it otherwise).
    void this.syncChannels().catch(() => {});
  }

  /** One NOTIFY through the pool must reach `client`; else the probe fails for good (see the file comment). */
  private async roundTrip(client: pg.Client): Promise<void> {
    const token = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      client.on("notification", (m) => {
        if (m.channel === PROBE_CHANNEL && m.payload === token) resolve(true);
      });
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
      timer.unref();
    });
    await client.query(`LISTEN ${PROBE_CHANNEL}`);
    await this.notify(PROBE_CHANNEL, token);
    const ok = await arrived;
    clearTimeout(timer);
    if (ok) {
      await client.query(`UNLISTEN ${PROBE_CHANNEL}`);
      this.probe = "passed";
      return;
    }
    this.probe = new SoniqError(
      "SONIQ_BACKEND_ERROR",
      `postgresBackend: a NOTIFY did not reach the LISTEN connection within ${PROBE_TIMEOUT_MS} ms (a transaction-mode pooler such as PgBouncer drops notifications), so workers poll. Set listenConnectionString to a direct connection for wake-ups, or listen: "poll" to skip this check.`,
      { context: { listen: this.mode } },
    );
    throw this.probe;
  }

  private dispatch(queue: string): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(queue);
      } catch {
        // A listener's failure must not stop the others or the connection.
      }
    }
  }

  private dispatchFinished(payload: string): void {
    if (this.finishedListeners.size === 0) return;
    const ids = payload.split(",").filter((id) => id.length > 0);
    if (ids.length === 0) return;
    for (const listener of [...this.finishedListeners]) {
      try {
        listener(ids);
      } catch {
        // As dispatch: one listener's failure stops nothing else.
      }
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = new Set();
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.subscribers === 0 || this.retryTimer) return;
    const delay = this.backoffMs / 2 + Math.random() * (this.backoffMs / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.ensureListening().catch(() => this.scheduleReconnect());
    }, delay);
    this.retryTimer.unref();
  }

  private async disconnect(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    this.listening = new Set();
    if (client) await client.end().catch(() => {});
  }
}
