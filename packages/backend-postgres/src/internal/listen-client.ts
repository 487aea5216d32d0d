/**
 * Wake-ups through LISTEN on one dedicated connection (never a pooled one: a pooled connection would be
 * handed to other queries and lose its LISTEN). States:
 * - idle: no subscribers, no connection.
 * - connecting -> listening: the first subscribe connects and runs LISTEN; subscribe resolves once listening.
 * - listening -> reconnecting: the connection fails or ends; a reconnect is scheduled with capped, jittered
 *   backoff (timer unref'd) while subscribers remain. Wake-ups are hints; the worker's polling covers the gap.
 * - last unsubscribe or close -> idle: the connection is ended.
 * Modes (`listen`): "notify" listens as above; "poll" never connects (subscribe resolves, nothing is
 * dispatched); "auto" listens and, on the first connection, proves that a NOTIFY sent through the pool
 * arrives (it does not through a transaction-mode pooler, which hands the LISTEN's server connection to
 * others). A failed probe is remembered: every subscribe then rejects with it, each worker logs one
 * warning and polls.
 */
import { randomUUID } from "node:crypto";
import { SoniqError, type WakeUpListener } from "@soniq/core/backend";
import pg from "pg";
import type { PostgresListenMode } from "../options.js";
import { translatePgError } from "./errors.js";

export const NEW_JOB_CHANNEL = "soniq_new_job";
const PROBE_CHANNEL = "soniq_listen_probe";
const PROBE_TIMEOUT_MS = 3000;

/** Sends `pg_notify(channel, payload)` the way enqueues do (through the pool). */
export type Notify = (channel: string, payload: string) => Promise<void>;

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

export class WakeUpChannel {
  private readonly listeners = new Set<WakeUpListener>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = MIN_BACKOFF_MS;
  private closed = false;
  private probe: "pending" | "passed" | SoniqError;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly mode: PostgresListenMode,
    private readonly notify: Notify,
  ) {
    this.probe = mode === "auto" ? "pending" : "passed";
  }

  async subscribe(listener: WakeUpListener): Promise<() => Promise<void>> {
    if (this.mode === "poll") return async () => {};
    if (this.probe instanceof SoniqError) throw this.probe;
    this.listeners.add(listener);
    try {
      await this.ensureListening();
    } catch (err) {
      this.listeners.delete(listener);
      throw err instanceof SoniqError ? err : translatePgError(err, "subscribe");
    }
    let active = true;
    return async () => {
      if (!active) return;
      active = false;
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.disconnect();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
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
    });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${NEW_JOB_CHANNEL}`);
      if (this.probe === "pending") await this.roundTrip(client);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    if (this.closed || this.listeners.size === 0) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.backoffMs = MIN_BACKOFF_MS;
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

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.listeners.size === 0 || this.retryTimer) return;
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
    if (client) await client.end().catch(() => {});
  }
}
