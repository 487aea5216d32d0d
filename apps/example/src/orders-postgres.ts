/**
 * Orders on PostgreSQL, on the same pg Pool Soniq uses. `create` checks out one client, runs
 * BEGIN / INSERT / Soniq's enqueue with `tx: client` / COMMIT on it, and rolls back on any failure:
 * the job rows (and their NOTIFY) exist only if the order does.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
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
  stock_reserved_at: Date | null;
  receipt_sent_at: Date | null;
  review_requested_at: Date | null;
  created_at: Date;
}

function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    customer: row.customer,
    email: row.email,
    totalCents: row.total_cents,
    invoiceNumber: row.invoice_number,
    stockReservedAt: row.stock_reserved_at,
    receiptSentAt: row.receipt_sent_at,
    reviewRequestedAt: row.review_requested_at,
    createdAt: row.created_at,
  };
}

export function postgresOrderStore(pool: pg.Pool): OrderStore {
  const get = async (id: string) => {
    const { rows } = await pool.query<OrderRow>("SELECT * FROM orders WHERE id = $1", [id]);
    return rows[0] ? toOrder(rows[0]) : null;
  };
  return {
    async migrate() {
      await pool.query(`CREATE TABLE IF NOT EXISTS orders (
        id uuid PRIMARY KEY,
        customer text NOT NULL,
        email text NOT NULL,
        total_cents integer NOT NULL CHECK (total_cents > 0),
        invoice_number text,
        stock_reserved_at timestamptz,
        receipt_sent_at timestamptz,
        review_requested_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    },

    async create<T>(order: NewOrder, enqueue: EnqueueInTransaction<T>) {
      const id = randomUUID();
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<OrderRow>(
          "INSERT INTO orders (id, customer, email, total_cents) VALUES ($1, $2, $3, $4) RETURNING *",
          [id, order.customer, order.email, order.totalCents],
        );
        const enqueued = await enqueue(client, id);
        await client.query("COMMIT");
        return { order: toOrder(rows[0] as OrderRow), enqueued };
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },

    get,

    async list(limit) {
      const { rows } = await pool.query<OrderRow>("SELECT * FROM orders ORDER BY created_at DESC LIMIT $1", [
        limit,
      ]);
      return rows.map(toOrder);
    },

    async updateEmail(id, email) {
      await pool.query("UPDATE orders SET email = $2 WHERE id = $1", [id, email]);
      return get(id);
    },

    async recordInvoice(id, invoiceNumber) {
      await pool.query("UPDATE orders SET invoice_number = $2 WHERE id = $1", [id, invoiceNumber]);
    },

    async stamp(id, milestone: OrderMilestone) {
      assertMilestone(milestone);
      await pool.query(`UPDATE orders SET ${milestone} = now() WHERE id = $1`, [id]);
    },
  };
}
