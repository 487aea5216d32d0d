/**
 * Fulfilment as a workflow (`soniq.flows`): once an order is placed, `POST /orders/:id/fulfil` starts the
 * flow `orders.fulfil`:
 *
 *     charge ──┐
 *              ├──> ship ──> notify
 *     reserve ─┘
 *
 * `charge` and `reserve` run at once (in parallel), `ship` when both are done, `notify` when the parcel
 * left. `reserve` is the app's flaky `orders.reserve_stock` (a step can be any job: its retries happen
 * inside the step). The pretend payment provider refuses a billing email on an undeliverable domain (its
 * fraud check), permanently: that `charge` is dead-lettered at once, and since `ship` keeps the default
 * `onParentFailure: "hold"`, the flow is **held**: nothing ships, nothing is lost. Correct the email, replay
 * the charge's dead letter (`POST /dead-letters/:id/replay`), and the new charge takes the step's place;
 * when it is done, `ship` and `notify` run and the flow succeeds. `ship` reads its parents' results with
 * `ctx.flow.parents()` (the amount charged), as a real label printer would.
 */
import { randomUUID } from "node:crypto";
import { PermanentError, type Soniq } from "@soniq/core";
import { type AppJobs, deliverEmail, type OrderRef } from "./jobs.js";
import type { Order, OrderStore } from "./orders.js";

export const FLOW_NAME = "orders.fulfil";

export const FULFIL_JOB_NAMES = {
  charge: "orders.charge",
  ship: "orders.ship",
  notify: "orders.notify_shipped",
} as const;

export function defineFulfilment(soniq: Soniq, orders: OrderStore, jobs: AppJobs) {
  const load = async (orderId: string): Promise<Order> => {
    const order = await orders.get(orderId);
    if (!order) throw new PermanentError(`order ${orderId} does not exist`);
    return order;
  };

  const charge = soniq.job(FULFIL_JOB_NAMES.charge, async ({ orderId }: OrderRef) => {
    const order = await load(orderId);
    if (/\.invalid$/i.test(order.email)) {
      // Retrying cannot change the provider's answer: dead-letter at once (an operator fixes the email).
      throw new PermanentError(
        `payment declined: billing email <${order.email}> is undeliverable (fraud check)`,
      );
    }
    return { chargedCents: order.totalCents, paymentId: `pay_${randomUUID().slice(0, 8)}` };
  });

  const ship = soniq.job(FULFIL_JOB_NAMES.ship, async ({ orderId }: OrderRef, ctx) => {
    await load(orderId);
    const parents = (await ctx.flow?.parents()) ?? {};
    const paid =
      parents.charge?.status === "done" ? (parents.charge.result as { chargedCents: number }) : null;
    if (!paid) throw new PermanentError(`order ${orderId} is not paid: refusing to ship`);
    return { trackingNumber: `TRK-${orderId.slice(0, 8).toUpperCase()}`, paidCents: paid.chargedCents };
  });

  const notify = soniq.job(FULFIL_JOB_NAMES.notify, async ({ orderId }: OrderRef) => {
    const order = await load(orderId);
    return { to: order.email, ...deliverEmail(order.email, "Your order has shipped") };
  });

  /** Starts the order's fulfilment flow; resolves with the flow id and each step's job id. */
  const startFulfilment = (orderId: string) =>
    soniq.flows.start({
      name: FLOW_NAME,
      steps: {
        charge: { job: charge, args: { orderId } },
        reserve: { job: jobs.reserveStock, args: { orderId } },
        ship: { job: ship, args: { orderId }, dependsOn: ["charge", "reserve"] },
        notify: { job: notify, args: { orderId }, dependsOn: ["ship"] },
      },
    });

  return { charge, ship, notify, startFulfilment };
}

export type Fulfilment = ReturnType<typeof defineFulfilment>;
