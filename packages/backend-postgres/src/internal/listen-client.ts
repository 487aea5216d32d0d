/**
 * Wake-ups through LISTEN on one dedicated connection (never a pooled one: a pooled connection would be
 * handed to other queries and lose its LISTEN). States:
 * - idle: no subscribers, no connection.
 * - connecting -> listening: the first subscribe connects and runs LISTEN; subscribe resolves once listening.
 * - listening -> reconnecting: the connection fails or ends; a reconnect is scheduled with capped, jittered
 *   backoff (timer unref'd) while subscribers remain. Wake-ups are hints; the worker's polling covers the gap.
 * - last unsubscribe or close -> idle: the connection is ended.
 */
import type { WakeUpListener } from "@soniq/core/backend";
import pg from "pg";
import { translatePgError } from "./errors.js";

export const NEW_JOB_CHANNEL = "soniq_new_job";

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

export class WakeUpChannel {
  private readonly listeners = new Set<WakeUpListener>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = MIN_BACKOFF_MS;
  private closed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  async subscribe(listener: WakeUpListener): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    try {
      await this.ensureListening();
    } catch (err) {
      this.listeners.delete(listener);
      throw translatePgError(err, "subscribe");
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
