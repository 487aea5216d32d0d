/**
 * The app's background jobs. Each takes `{ orderId }` (a review request also its channel) and reads the order, so
 * the args stay small and a replayed job sees today's data (e.g. a corrected email address).
 *
 * - orders.send_invoice: numbers the invoice and records it. Always succeeds.
 * - orders.reserve_stock: calls a flaky warehouse that answers 503 to the first `warehouseFailures`
 *   attempts of every job, then succeeds: it shows retries with a per-attempt delay list.
 * - orders.email_receipt: the mail provider rejects addresses on `.invalid` domains every time, so that
 *   job exhausts its attempts and lands in the dead-letter table; fix the address, replay, and it succeeds.
 * - orders.request_review: enqueued with a delay; asks the customer for a review later. Its args are version 2,
 *   `{ orderId, channel }`: version 1 (`{ orderId }`) had no channel, so its upcaster makes an old request, still
 *   in the queue from the previous deploy, an email one (DESIGN.md section 20).
 * - reports.nightly_sales: a recurring job (`soniq.schedules.declare`, schedule `reports.nightly`): every night at
 *   02:00 Berlin time it sums the orders of the last 24 hours. Any worker started with `schedules: true`
 *   runs the scheduler; one of them leads, so the report is made once per night however many run.
 *
 * The fulfilment flow's jobs are in fulfilment.ts; the return job (durable steps) is in returns.ts.
 */
import { randomUUID } from "node:crypto";
import { PermanentError, type Soniq } from "@soniq/core";
import type { Order, OrderStore } from "./orders.js";

export interface OrderRef {
  orderId: string;
}

/** orders.request_review's args, version 2 (version 1 was an `OrderRef`: reviews were asked by email only). */
export interface ReviewRequest extends OrderRef {
  channel: "email" | "sms";
}

export interface JobSettings {
  /** Attempts of each reserve_stock job that fail before the warehouse answers. Default 2. */
  warehouseFailures?: number;
  /** Delay before orders.request_review runs, in ms. Default 5000. */
  reviewDelayMs?: number;
  /** How long a return's refund waits after the parcel arrived (returns.ts), in ms. Default 60_000. */
  refundHoldMs?: number;
}

export const JOB_NAMES = {
  sendInvoice: "orders.send_invoice",
  reserveStock: "orders.reserve_stock",
  emailReceipt: "orders.email_receipt",
  requestReview: "orders.request_review",
  nightlySales: "reports.nightly_sales",
} as const;

/** The nightly report's schedule name (see `soniq.schedules.get/trigger/history`). */
export const NIGHTLY_REPORT = "reports.nightly";

export interface SalesReport {
  since: string;
  until: string;
  orders: number;
  totalCents: number;
}

/** The pretend mail provider: addresses on reserved `.invalid` domains bounce, as they would for real. */
export function deliverEmail(to: string, subject: string): { messageId: string; subject: string } {
  if (/\.invalid$/i.test(to)) throw new Error(`550 5.1.1 <${to}>: mailbox unavailable`);
  return { messageId: `<${randomUUID().slice(0, 8)}@mail.example>`, subject };
}

const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function defineJobs(soniq: Soniq, orders: OrderStore, settings: JobSettings = {}) {
  const warehouseFailures = settings.warehouseFailures ?? 2;
  const reviewDelayMs = settings.reviewDelayMs ?? 5000;

  const load = async (orderId: string): Promise<Order> => {
    const order = await orders.get(orderId);
    // Retrying cannot make a missing order appear: dead-letter at once.
    if (!order) throw new PermanentError(`order ${orderId} does not exist`);
    return order;
  };

  const sendInvoice = soniq.job(JOB_NAMES.sendInvoice, async ({ orderId }: OrderRef) => {
    const order = await load(orderId);
    const invoiceNumber = `INV-${order.createdAt.getUTCFullYear()}-${orderId.slice(0, 8).toUpperCase()}`;
    await orders.recordInvoice(orderId, invoiceNumber);
    return { invoiceNumber, totalCents: order.totalCents };
  });

  const reserveStock = soniq.job(
    JOB_NAMES.reserveStock,
    async ({ orderId }: OrderRef, ctx) => {
      await load(orderId);
      if (ctx.attempt <= warehouseFailures) {
        throw new Error(`warehouse API answered 503 Service Unavailable (attempt ${ctx.attempt})`);
      }
      await orders.stamp(orderId, "stock_reserved_at");
      return { reserved: true, attempt: ctx.attempt };
    },
    { maxAttempts: warehouseFailures + 3, retry: { delaysMs: [200, 400, 800] } },
  );

  const emailReceipt = soniq.job(
    JOB_NAMES.emailReceipt,
    async ({ orderId }: OrderRef) => {
      const order = await load(orderId);
      const sent = deliverEmail(order.email, `Your receipt for ${money(order.totalCents)}`);
      await orders.stamp(orderId, "receipt_sent_at");
      return { to: order.email, ...sent };
    },
    { maxAttempts: 2, retry: { delaysMs: [200] } },
  );

  const requestReview = soniq.job(
    JOB_NAMES.requestReview,
    async ({ orderId, channel }: ReviewRequest) => {
      const order = await load(orderId);
      await orders.stamp(orderId, "review_requested_at");
      return { asked: order.customer, channel };
    },
    // A request the previous deploy enqueued (version 1) is upcast when it runs: it was an email.
    { version: 2, upcast: { 1: (old: OrderRef): ReviewRequest => ({ ...old, channel: "email" }) } },
  );

  const nightlySales = soniq.job(
    JOB_NAMES.nightlySales,
    async (): Promise<SalesReport> => {
      const until = new Date();
      const since = new Date(until.getTime() - 86_400_000);
      const recent = (await orders.list(1000)).filter((o) => o.createdAt >= since && o.createdAt < until);
      const totalCents = recent.reduce((sum, o) => sum + o.totalCents, 0);
      return { since: since.toISOString(), until: until.toISOString(), orders: recent.length, totalCents };
    },
    { queue: "reports" },
  );
  // 02:00 in Berlin, winter or summer; a night missed while no worker ran is made up once ("latest").
  soniq.schedules.declare(nightlySales, {
    cron: "0 2 * * *",
    timezone: "Europe/Berlin",
    name: NIGHTLY_REPORT,
  });

  /** The jobs of a new order, in one enqueueMany on the order's transaction handle (see OrderStore.create). */
  const enqueueForNewOrder = (tx: unknown, orderId: string) =>
    soniq.jobs.enqueueMany(
      [
        { job: sendInvoice, args: { orderId } },
        { job: reserveStock, args: { orderId } },
        { job: emailReceipt, args: { orderId } },
        { job: requestReview, args: { orderId, channel: "email" }, options: { delayMs: reviewDelayMs } },
      ],
      { tx },
    );

  return {
    sendInvoice,
    reserveStock,
    emailReceipt,
    requestReview,
    nightlySales,
    enqueueForNewOrder,
    reviewDelayMs,
  };
}

export type AppJobs = ReturnType<typeof defineJobs>;
