/**
 * `queue.backlog`: a queue whose lag (the age of its oldest due job) reaches its `lagAlertMs` fires once,
 * and again only after its lag fell back below the threshold. Checked by the worker holding the maintenance
 * lease, at the maintenance cadence; the crossing state lives in that worker, so a change of lease holder
 * may fire a backlog that is still going on once more (deliveries are at-least-once anyway). Nothing is read
 * while no endpoint receives `queue.backlog`.
 */
import type { GuardedBackend } from "../contract/index.js";
import type { WebhookDispatch } from "./dispatch.js";

export class BacklogWatch {
  readonly #alerting = new Set<string>();

  constructor(
    private readonly backend: GuardedBackend<unknown>,
    private readonly webhooks: WebhookDispatch,
  ) {}

  /** Fires `queue.backlog` for every queue that crossed its threshold since the last check; returns how many. */
  async check(): Promise<number> {
    if (!this.webhooks.wants("queue.backlog") || !this.backend.supports("queues")) {
      this.#alerting.clear();
      return 0;
    }
    const queues = await this.backend.queues.list({ exactCountsUpTo: 0 });
    const rows = [];
    const backlogged = new Set<string>();
    for (const q of queues) {
      if (q.lagAlertMs === null || q.lagMs === null || q.lagMs < q.lagAlertMs) continue;
      backlogged.add(q.name);
      if (this.#alerting.has(q.name)) continue;
      rows.push(
        ...this.webhooks.rows("queue.backlog", () => ({
          queue: q.name,
          lagMs: q.lagMs,
          lagAlertMs: q.lagAlertMs,
          queued: q.stats.queued,
        })),
      );
    }
    if (rows.length > 0) {
      await this.backend.webhooks.enqueue(rows);
      this.webhooks.notify();
    }
    this.#alerting.clear();
    for (const name of backlogged) this.#alerting.add(name);
    return rows.length;
  }
}
