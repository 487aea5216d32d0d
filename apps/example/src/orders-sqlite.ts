/**
 * Orders on SQLite, on the same better-sqlite3 connection Soniq uses. The transaction is synchronous
 * (better-sqlite3's `db.transaction`): Soniq's enqueue with `tx: db` inserts before it returns its
 * promise, so the job rows commit or roll back with the order row.
 */
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import {
  assertMilestone,
  type EnqueueInTransaction,
  type NewOrder,
  type Order,
  type OrderMilestone,
  type OrderStore,
} from "./orders.js";

interface OrderRow {
  id: string;
  customer: string;
  email: string;
  total_cents: number;
  invoice_number: string | null;
  stock_reserved_at: number | null;
  receipt_sent_at: number | null;
  review_requested_at: number | null;
  created_at: number;
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    customer: row.customer,
    email: row.email,
    totalCents: row.total_cents,
    invoiceNumber: row.invoice_number,
    stockReservedAt: date(row.stock_reserved_at),
    receiptSentAt: date(row.receipt_sent_at),
    reviewRequestedAt: date(row.review_requested_at),
    createdAt: new Date(row.created_at),
  };
}

export function sqliteOrderStore(db: Database.Database): OrderStore {
  const get = (id: string) => {
    const row = db.prepare("SELECT * FROM orders WHERE id = ?").get(id) as OrderRow | undefined;
    return row ? toOrder(row) : null;
  };
  return {
    async migrate() {
      db.exec(`CREATE TABLE IF NOT EXISTS orders (
        id TEXT PRIMARY KEY,
        customer TEXT NOT NULL,
        email TEXT NOT NULL,
        total_cents INTEGER NOT NULL CHECK (total_cents > 0),
        invoice_number TEXT,
        stock_reserved_at INTEGER,
        receipt_sent_at INTEGER,
        review_requested_at INTEGER,
        created_at INTEGER NOT NULL
      )`);
    },

    async create<T>(order: NewOrder, enqueue: EnqueueInTransaction<T>) {
      const id = randomUUID();
      let pending: Promise<T> | undefined;
      db.transaction(() => {
        db.prepare(
          "INSERT INTO orders (id, customer, email, total_cents, created_at) VALUES (?, ?, ?, ?, ?)",
        ).run(id, order.customer, order.email, order.totalCents, Date.now());
        // No await in here: each enqueue writes its row now, inside this transaction.
        pending = enqueue(db, id);
      })();
      try {
        const enqueued = await (pending as Promise<T>);
        return { order: get(id) as Order, enqueued };
      } catch (err) {
        // A failed enqueue reports through its promise, which settles after the synchronous transaction
        // has committed; enqueueMany wrote nothing, so remove the order to keep "both or neither".
        db.prepare("DELETE FROM orders WHERE id = ?").run(id);
        throw err;
      }
    },

    async get(id) {
      return get(id);
    },

    async list(limit) {
      const rows = db
        .prepare("SELECT * FROM orders ORDER BY created_at DESC LIMIT ?")
        .all(limit) as OrderRow[];
      return rows.map(toOrder);
    },

    async updateEmail(id, email) {
      db.prepare("UPDATE orders SET email = ? WHERE id = ?").run(email, id);
      return get(id);
    },

    async recordInvoice(id, invoiceNumber) {
      db.prepare("UPDATE orders SET invoice_number = ? WHERE id = ?").run(invoiceNumber, id);
    },

    async stamp(id, milestone: OrderMilestone) {
      assertMilestone(milestone);
      db.prepare(`UPDATE orders SET ${milestone} = ? WHERE id = ?`).run(Date.now(), id);
    },
  };
}
