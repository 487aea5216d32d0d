/**
 * Returns as one job with durable steps (`ctx.step`, `ctx.waitForSignal`, `ctx.sleep`): `POST /orders/:id/returns`
 * enqueues `orders.process_return`, whose id is the return's id:
 *
 *     return_label ──> parcel_received ──> refund_hold ──> refund
 *        (step)           (signal)           (sleep)       (step)
 *
 * - `return_label`: the pretend carrier makes a label. A step runs once per job: when the handler runs again
 *   (after a wait, a retry or a replay) it returns the stored label instead of asking the carrier again.
 * - `parcel_received`: waits (up to 30 days) for the warehouse's scan, `POST /returns/:id/received`, which calls
 *   `soniq.jobs.signal(id, "parcel_received", { condition })`. Meanwhile the job is a queued job due at the
 *   deadline: it holds no worker, and `soniq.jobs.explain(id)` answers `waiting_for_signal`.
 * - `refund_hold`: the money goes back `refundHoldMs` after the parcel arrived (a minute by default, 1.5 s in the
 *   tour; a day in a real shop). A sleep of 1 s or more puts the job back in the queue, due at the wake time, and
 *   spends no attempt; the handler then runs again from the top and the done steps return their stored values.
 * - `refund`: the pretend payment provider refunds the order. A parcel scanned `damaged` needs a person's
 *   decision: `PermanentError`, so the job is dead-lettered with its steps. The operator decides, then replays it
 *   with the refund resolved by hand (`soniq.deadLetters.replay(id, { resolve: { refund: { ... } } })`): the new
 *   job keeps the done steps (the label is not made again) and finishes.
 */
import { randomUUID } from "node:crypto";
import { PermanentError, type Soniq } from "@soniq/core";
import type { JobSettings, OrderRef } from "./jobs.js";
import type { Order, OrderStore } from "./orders.js";

export const RETURN_JOB_NAME = "orders.process_return";
/** The signal the warehouse sends when it scans the returned parcel. */
export const PARCEL_RECEIVED = "parcel_received";
export const PARCEL_CONDITIONS = ["as_new", "damaged"] as const;

export interface ParcelScan {
  condition: (typeof PARCEL_CONDITIONS)[number];
}

export interface ReturnLabel {
  labelId: string;
  carrier: string;
}

export interface Refund {
  refundId: string;
  refundedCents: number;
}

export type ReturnResult =
  | ({ refunded: true; labelId: string; condition: ParcelScan["condition"] } & Refund)
  | { refunded: false; labelId: string; reason: "parcel never arrived" };

const PARCEL_TIMEOUT_MS = 30 * 86_400_000;

/** The pretend carrier: a new label (a new id) every time it is asked. */
function makeLabel(order: Order): ReturnLabel {
  return { labelId: `RET-${order.id.slice(0, 4).toUpperCase()}-${randomUUID().slice(0, 4)}`, carrier: "DHL" };
}

export function defineReturns(soniq: Soniq, orders: OrderStore, settings: JobSettings = {}) {
  const refundHoldMs = settings.refundHoldMs ?? 60_000;

  const processReturn = soniq.job(
    RETURN_JOB_NAME,
    async ({ orderId }: OrderRef, ctx): Promise<ReturnResult> => {
      const order = await orders.get(orderId);
      if (!order) throw new PermanentError(`order ${orderId} does not exist`);
      const label = await ctx.step("return_label", () => makeLabel(order));
      const parcel = await ctx.waitForSignal<ParcelScan>(PARCEL_RECEIVED, { timeoutMs: PARCEL_TIMEOUT_MS });
      if (parcel === null) return { refunded: false, labelId: label.labelId, reason: "parcel never arrived" };
      await ctx.sleep("refund_hold", refundHoldMs);
      const refund = await ctx.step("refund", (): Refund => {
        if (parcel.condition === "damaged") {
          // Retrying cannot decide how much to give back: dead-letter at once, a person resolves the step.
          throw new PermanentError("parcel arrived damaged: a person decides the refund");
        }
        return { refundId: `re_${randomUUID().slice(0, 8)}`, refundedCents: order.totalCents };
      });
      return { refunded: true, labelId: label.labelId, condition: parcel.condition, ...refund };
    },
    { maxAttempts: 3, retry: { delaysMs: [200] } },
  );

  /** Starts the order's return; resolves with the return's id (its job's id). */
  const startReturn = async (orderId: string): Promise<string> =>
    (await processReturn.enqueue({ orderId })).id;

  /** The warehouse scanned the parcel: signal the return's job (a resend with the same `scanId` is a no-op). */
  const parcelReceived = (returnId: string, scan: ParcelScan, scanId?: string) =>
    soniq.jobs.signal(returnId, PARCEL_RECEIVED, scan, {
      actor: "warehouse",
      ...(scanId === undefined ? {} : { key: scanId }),
    });

  return { processReturn, startReturn, parcelReceived, refundHoldMs };
}

export type Returns = ReturnType<typeof defineReturns>;
