/**
 * The app's own data: orders, in a table beside Soniq's (`orders`, next to `soniq_jobs`). Each dialect
 * has its store (orders-sqlite.ts, orders-postgres.ts); the HTTP layer and the jobs see only this interface.
 */

export interface NewOrder {
  customer: string;
  email: string;
  totalCents: number;
}

export interface Order extends NewOrder {
  id: string;
  invoiceNumber: string | null;
  stockReservedAt: Date | null;
  receiptSentAt: Date | null;
  reviewRequestedAt: Date | null;
  createdAt: Date;
}

/** Timestamps the jobs stamp when they finish their part of an order. */
export type OrderMilestone = "stock_reserved_at" | "receipt_sent_at" | "review_requested_at";

/**
 * Enqueues a new order's jobs on the transaction handle `tx`. On SQLite the enqueue call must be made
 * synchronously (no `await` before it): better-sqlite3 transactions are synchronous, and the insert
 * joins the transaction only while it is open. Soniq's enqueue writes before it returns its promise.
 */
export type EnqueueInTransaction<T> = (tx: unknown, orderId: string) => Promise<T>;

export interface OrderStore {
  /** Creates the `orders` table if missing. */
  migrate(): Promise<void>;
  /** Inserts the order and runs `enqueue` in the same database transaction: both commit, or neither. */
  create<T>(order: NewOrder, enqueue: EnqueueInTransaction<T>): Promise<{ order: Order; enqueued: T }>;
  get(id: string): Promise<Order | null>;
  list(limit: number): Promise<Order[]>;
  updateEmail(id: string, email: string): Promise<Order | null>;
  recordInvoice(id: string, invoiceNumber: string): Promise<void>;
  stamp(id: string, milestone: OrderMilestone): Promise<void>;
}

export const MILESTONES: readonly OrderMilestone[] = [
  "stock_reserved_at",
  "receipt_sent_at",
  "review_requested_at",
];

export function assertMilestone(milestone: string): asserts milestone is OrderMilestone {
  if (!(MILESTONES as readonly string[]).includes(milestone))
    throw new Error(`unknown milestone ${milestone}`);
}
