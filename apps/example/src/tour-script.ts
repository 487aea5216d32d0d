/**
 * The scripted tour: starts the app on an ephemeral port with a worker in the same process, drives it
 * over HTTP like a client would, waits (bounded) for the jobs, and prints what happened. Returns what it
 * saw so the tests can check the same run.
 */
import type { DeadLetterJob, Explanation, Flow, Job, JobStep, QueueStats, Soniq } from "@soniq/core";
import { shortId as short } from "@soniq/core/ops";
import { type App, createApp } from "./app.js";
import type { DatabaseTarget } from "./database.js";
import { JOB_NAMES, type OrderRef } from "./jobs.js";
import type { Order } from "./orders.js";
import type { Refund, ReturnLabel } from "./returns.js";
import { logWorkerEvents } from "./worker-log.js";

export interface TourOptions {
  database: DatabaseTarget;
  print?: (line: string) => void;
  /** Longest wait for any one step. Default 20_000 ms. */
  stepTimeoutMs?: number;
}

export interface TourSummary {
  orders: Order[];
  rejectedStatus: number;
  deadLetter: DeadLetterJob;
  replayedJob: Job;
  /** Ada's fulfilment flow at the end (succeeded without help). */
  adaFlow: Flow;
  /** Grace's fulfilment flow when it was held (its charge dead-lettered), and at the end (resumed). */
  heldFlow: Flow;
  resumedFlow: Flow;
  /** The returns chapter (durable steps): Ada's return, and Grace's damaged parcel resolved by hand. */
  returns: ReturnsSummary;
  /** The versions chapter: a review request enqueued as version 1, run by this deploy's version-2 handler. */
  upcastJob: Job;
  stats: QueueStats;
  /** Worker lines, in order. */
  workerLines: string[];
  elapsedMs: number;
}

export interface ReturnsSummary {
  /** Ada's return as explain saw it while it waited for the parcel. */
  waiting: Explanation;
  adaReturn: Job;
  adaSteps: JobStep[];
  /** Grace's return, dead-lettered at its refund, with its steps. */
  deadLetter: DeadLetterJob;
  deadLetterSteps: JobStep[];
  /** Its replay with the refund resolved by hand. */
  replayedJob: Job;
  replayedSteps: JobStep[];
}

interface Api {
  call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

function api(base: string): Api {
  return {
    async call<T>(method: string, path: string, body?: unknown) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as T };
    },
  };
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`tour: gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/**
 * The tour fails (exit 1) unless what it printed is what should have happened to its own orders and jobs.
 * (Stats are printed, not checked: a database named by SONIQ_DATABASE_URL may hold other jobs.)
 */
function checkOutcome(
  orders: Order[],
  replayedJob: Job,
  deadLetter: DeadLetterJob,
  flows: Flow[],
  returns: ReturnsSummary,
  upcastJob: Job,
): void {
  const unfinished = orders.filter((o) => !(o.receiptSentAt && o.stockReservedAt && o.reviewRequestedAt));
  if (orders.length !== 2 || unfinished.length > 0) {
    throw new Error(`tour: expected 2 finished orders, got ${JSON.stringify(orders)}`);
  }
  if (replayedJob.status !== "done" || deadLetter.resurrectionCount !== 1) {
    throw new Error(
      `tour: expected a done replay of a dead letter resurrected once, got ${deadLetter.resurrectionCount}`,
    );
  }
  const open = flows.filter((f) => f.state !== "succeeded");
  if (open.length > 0)
    throw new Error(`tour: expected both fulfilment flows succeeded, got ${open.map((f) => f.state)}`);
  checkReturns(returns);
  const channel = (upcastJob.result as { channel?: string } | null)?.channel;
  if (upcastJob.status !== "done" || upcastJob.argsVersion !== 1 || channel !== "email") {
    throw new Error(
      `tour: expected the version-1 review request done with the channel its upcaster added, got ${upcastJob.status}, ` +
        `version ${upcastJob.argsVersion}, channel ${channel}`,
    );
  }
}

/** Ada's return ran its four steps; Grace's replay kept the dead letter's label and took the operator's refund. */
function checkReturns(r: ReturnsSummary): void {
  const timeline = (steps: JobStep[]) => steps.map((st) => `${st.name}:${st.kind}:${st.state}`).join(", ");
  const expected =
    "return_label:step:done, parcel_received:signal:done, refund_hold:sleep:done, refund:step:done";
  const refund = r.replayedSteps.find((st) => st.name === "refund");
  const problems = [
    r.adaReturn.status === "done" && r.adaReturn.attempts === 1 ? null : "Ada's return done on attempt 1",
    timeline(r.adaSteps) === expected ? null : `Ada's steps ${expected}, got ${timeline(r.adaSteps)}`,
    r.replayedJob.status === "done" ? null : "Grace's replayed return done",
    timeline(r.replayedSteps) === expected
      ? null
      : `the replay's steps ${expected}, got ${timeline(r.replayedSteps)}`,
    labelOf(r.deadLetterSteps) !== undefined && labelOf(r.replayedSteps) === labelOf(r.deadLetterSteps)
      ? null
      : "the replay to keep the dead letter's label",
    refund?.attempt === 0 && (refund.value as Refund).refundId === MANUAL_REFUND.refundId
      ? null
      : "the replay's refund resolved by hand (attempt 0)",
  ].filter((p) => p !== null);
  if (problems.length > 0) throw new Error(`tour: expected ${problems.join("; ")}`);
}

export async function runTour(options: TourOptions): Promise<TourSummary> {
  const print = options.print ?? console.log;
  const timeout = options.stepTimeoutMs ?? 20_000;
  const started = Date.now();
  const workerLines: string[] = [];
  const app: App = await createApp({
    database: options.database,
    workerOptions: { concurrency: 5, pollIntervalMs: 50 },
    jobs: { warehouseFailures: 2, reviewDelayMs: 1500, refundHoldMs: 1500 },
  });
  try {
    logWorkerEvents(app.worker as NonNullable<App["worker"]>, (line) => {
      workerLines.push(line);
      print(`    worker | ${line}`);
    });
    const base = await app.listen(0);
    print(`Soniq example tour on ${app.db.description}`);
    print(`  the orders API listens on ${base}, with a worker in the same process\n`);
    const http = api(base);
    return await tourSteps({ http, print, timeout }, app.soniq, workerLines, started);
  } finally {
    await app.close();
  }
}

async function placeOrders(http: Api, print: (line: string) => void) {
  const placed: { order: Order; jobIds: string[] }[] = [];
  for (const input of [
    { customer: "Ada Lovelace", email: "ada@example.com", totalCents: 4250 },
    { customer: "Grace Hopper", email: "grace@example.invalid", totalCents: 1999 },
  ]) {
    print(`POST /orders ${input.customer} <${input.email}> ${money(input.totalCents)}`);
    const res = await http.call<{ order: Order; jobIds: string[] }>("POST", "/orders", input);
    if (res.status !== 201)
      throw new Error(`tour: POST /orders answered ${res.status}: ${JSON.stringify(res.body)}`);
    placed.push(res.body);
    print(
      `  -> 201: order ${short(res.body.order.id)} and its ${res.body.jobIds.length} jobs, written in one transaction`,
    );
  }
  const bad = await http.call<{ error: string }>("POST", "/orders", { customer: "", totalCents: -5 });
  print(`POST /orders with no customer -> ${bad.status} (${bad.body.error}); nothing written\n`);
  return { placed, rejectedStatus: bad.status };
}

interface Placed {
  order: Order;
  jobIds: string[];
}

interface Step {
  http: Api;
  print: (line: string) => void;
  timeout: number;
}

async function waitForJobs(
  { http, print, timeout }: Step,
  ada: Order,
  grace: Order,
  graceJobIds: string[],
): Promise<DeadLetterJob> {
  print("Waiting for the jobs: invoices, a flaky warehouse, a bouncing email, a delayed review request...");
  // A dead-lettered job keeps its id: the receipt enqueued with Grace's order is the row to wait for.
  const dead = await waitFor("the receipt to Grace to be dead-lettered", timeout, async () => {
    const res = await http.call<{ deadLetters: DeadLetterJob[] }>("GET", "/dead-letters");
    return res.body.deadLetters.find((row) => graceJobIds.includes(row.id));
  });
  const reviewed = await waitFor("both orders to be invoiced, reserved and reviewed", timeout, async () => {
    const orders = await Promise.all([ada, grace].map((o) => http.call<Order>("GET", `/orders/${o.id}`)));
    const rows = orders.map((r) => r.body);
    return rows.every((o) => o.invoiceNumber && o.stockReservedAt && o.reviewRequestedAt) ? rows : undefined;
  });
  const requestedAfter =
    Date.parse(String(reviewed[0]?.reviewRequestedAt)) - Date.parse(String(ada.createdAt));
  print(
    `  the review request for Ada ran ${requestedAfter} ms after the order (enqueued with delayMs: 1500)\n`,
  );
  return dead;
}

async function fixAndReplay({ http, print, timeout }: Step, dead: DeadLetterJob, grace: Order) {
  print(`GET /dead-letters -> ${dead.jobName} ${short(dead.id)} is there, reason ${dead.deadLetterReason}`);
  print(`  after ${dead.attempts} attempts; last error: ${(dead.lastError ?? "").split("\n")[0]}`);
  const fixed = await http.call<Order>("PATCH", `/orders/${grace.id}`, { email: "grace@example.com" });
  print(`PATCH /orders/${short(grace.id)} email -> ${fixed.status}, now ${fixed.body.email}`);
  const replay = await http.call<{ newJobId: string }>("POST", `/dead-letters/${dead.id}/replay`);
  print(
    `POST /dead-letters/${short(dead.id)}/replay -> ${replay.status}, new job ${short(replay.body.newJobId)}`,
  );
  const replayedJob = await waitFor("the replayed receipt to be sent", timeout, async () => {
    const res = await http.call<Job>("GET", `/jobs/${replay.body.newJobId}`);
    return res.body.status === "done" ? res.body : undefined;
  });
  const list = await http.call<{ deadLetters: DeadLetterJob[] }>("GET", "/dead-letters");
  const kept = list.body.deadLetters.find((row) => row.id === dead.id) ?? dead;
  print(
    `  the replayed job is ${replayedJob.status}; the dead-letter row stays, resurrected ${kept.resurrectionCount} time(s)\n`,
  );
  return { replayedJob, deadLetter: kept };
}

/** "charge dead_lettered, reserve done, ship held, notify waiting". */
const stepStates = (flow: Flow) => flow.steps.map((st) => `${st.ref} ${st.state}`).join(", ");

async function startFlows({ http, print }: Step, orders: Order[]): Promise<string[]> {
  const ids: string[] = [];
  for (const order of orders) {
    const res = await http.call<{ flowId: string }>("POST", `/orders/${order.id}/fulfil`);
    if (res.status !== 202) throw new Error(`tour: POST /orders/:id/fulfil answered ${res.status}`);
    print(
      `POST /orders/${short(order.id)}/fulfil -> 202: flow ${short(res.body.flowId)} (charge and reserve, then ship, then notify)`,
    );
    ids.push(res.body.flowId);
  }
  return ids;
}

async function flowIn(http: Api, id: string, states: string[]): Promise<Flow | undefined> {
  const flow = (await http.call<Flow>("GET", `/flows/${id}`)).body;
  return states.includes(flow.state) ? flow : undefined;
}

async function waitForHeld({ http, print, timeout }: Step, heldId: string): Promise<Flow> {
  const held = await waitFor("Grace's fulfilment flow to be held", timeout, () =>
    flowIn(http, heldId, ["held"]),
  );
  print(`GET /flows/${short(heldId)} -> held: ${stepStates(held)}`);
  print(
    "  the payment provider declined the charge for good, so ship is held: nothing shipped, nothing lost\n",
  );
  return held;
}

async function resumeFlow({ http, print, timeout }: Step, held: Flow): Promise<Flow> {
  const charge = held.steps.find((st) => st.ref === "charge") as Flow["steps"][number];
  // A dead-lettered step's job id is its dead letter's: replaying it puts the new job in the step's place.
  const replay = await http.call<{ newJobId: string }>("POST", `/dead-letters/${charge.jobId}/replay`);
  print(
    `POST /dead-letters/${short(charge.jobId)}/replay (the held flow's charge) -> ${replay.status}, new job ${short(replay.body.newJobId)}`,
  );
  const done = await waitFor("the resumed flow to succeed", timeout, () =>
    flowIn(http, held.id, ["succeeded", "failed", "cancelled"]),
  );
  print(`GET /flows/${short(held.id)} -> ${done.state}: ${stepStates(done)}\n`);
  return done;
}

/** What the operator decides for Grace's damaged parcel: half the money back, by bank transfer. */
const MANUAL_REFUND: Refund = { refundId: "manual-1", refundedCents: 1000 };

/** `  return_label     step    done     attempt 1  {"labelId":...}`: one line per checkpoint. */
function printSteps(print: (line: string) => void, steps: JobStep[]): void {
  for (const st of steps) {
    const took = Date.parse(String(st.finishedAt)) - Date.parse(String(st.startedAt));
    const what =
      st.kind === "sleep"
        ? `slept ${took} ms`
        : st.error !== null
          ? (st.error.split("\n")[0] ?? "")
          : JSON.stringify(st.value) + (st.kind === "signal" ? ` (waited ${took} ms)` : "");
    print(
      `  ${st.name.padEnd(16)} ${st.kind.padEnd(6)} ${st.state.padEnd(6)} attempt ${st.attempt}  ${what}`,
    );
  }
}

const labelOf = (steps: JobStep[]) =>
  (steps.find((st) => st.name === "return_label")?.value as ReturnLabel | undefined)?.labelId;

async function returnJob(http: Api, id: string): Promise<Job | undefined> {
  const job = (await http.call<Job>("GET", `/jobs/${id}`)).body;
  return job.status === "done" ? job : undefined;
}

const jobSteps = async (http: Api, id: string) =>
  (await http.call<{ steps: JobStep[] }>("GET", `/jobs/${id}/steps`)).body.steps;

/**
 * Durable steps: a return per order, one job each (label, wait for the parcel, a 1.5 s hold, refund). Both wait
 * for the warehouse's signal without holding a worker; Ada's parcel is fine and her refund is made after the
 * hold; Grace's is damaged, so her refund step dead-letters, and the replay resolves it by hand.
 */
async function returnParcels({ http, print, timeout }: Step, ada: Order, grace: Order) {
  const ids: string[] = [];
  for (const order of [ada, grace]) {
    const res = await http.call<{ returnId: string }>("POST", `/orders/${order.id}/returns`);
    if (res.status !== 202) throw new Error(`tour: POST /orders/:id/returns answered ${res.status}`);
    print(
      `POST /orders/${short(order.id)}/returns -> 202: return ${short(res.body.returnId)}, one job: label, wait for the parcel, 1.5 s hold, refund`,
    );
    ids.push(res.body.returnId);
  }
  const [adaId, graceId] = ids as [string, string];
  const explain = async (id: string) => {
    const e = (await http.call<Explanation>("GET", `/jobs/${id}/explain`)).body;
    return e.reasons.some((r) => r.code === "waiting_for_signal") ? e : undefined;
  };
  const waiting = await waitFor("Ada's return to wait for the parcel", timeout, () => explain(adaId));
  await waitFor("Grace's return to wait for the parcel", timeout, () => explain(graceId));
  const reason = waiting.reasons.find((r) => r.code === "waiting_for_signal");
  print(
    `GET /jobs/${short(adaId)}/explain -> ${waiting.status}, ${reason?.code} "${reason?.evidence.signal}": label made, no worker held`,
  );
  for (const [id, condition] of [
    [adaId, "as_new"],
    [graceId, "damaged"],
  ] as const) {
    const res = await http.call<{ woke: boolean }>("POST", `/returns/${id}/received`, { condition });
    print(
      `POST /returns/${short(id)}/received {"condition":"${condition}"} -> ${res.status}: jobs.signal ${res.body.woke ? "woke the job" : "stored the signal"}`,
    );
  }
  const adaReturn = await waitFor("Ada's return to be refunded", timeout, () => returnJob(http, adaId));
  const adaSteps = await jobSteps(http, adaId);
  print(`GET /jobs/${short(adaId)}/steps -> done on attempt ${adaReturn.attempts}, the waits spent none:`);
  printSteps(print, adaSteps);
  print("");
  return { waiting, adaReturn, adaSteps, ...(await resolveByHand({ http, print, timeout }, graceId)) };
}

async function resolveByHand({ http, print, timeout }: Step, id: string) {
  const deadLetter = await waitFor("Grace's return to be dead-lettered", timeout, async () => {
    const res = await http.call<{ deadLetters: DeadLetterJob[] }>("GET", "/dead-letters");
    return res.body.deadLetters.find((row) => row.id === id);
  });
  const deadLetterSteps = await jobSteps(http, id);
  print(
    `GET /dead-letters -> ${deadLetter.jobName} ${short(id)} is there, reason ${deadLetter.deadLetterReason}`,
  );
  const states = deadLetterSteps.map((st) => `${st.name} ${st.state}`).join(", ");
  print(`  its steps stay with it: ${states}; its label is ${labelOf(deadLetterSteps)}`);
  const resolve = { refund: MANUAL_REFUND };
  const replay = await http.call<{ newJobId: string }>("POST", `/dead-letters/${id}/replay`, { resolve });
  print(
    `POST /dead-letters/${short(id)}/replay ${JSON.stringify({ resolve })} -> ${replay.status}, new job ${short(replay.body.newJobId)}`,
  );
  const replayedJob = await waitFor("the replayed return to finish", timeout, () =>
    returnJob(http, replay.body.newJobId),
  );
  const replayedSteps = await jobSteps(http, replay.body.newJobId);
  print(
    `GET /jobs/${short(replayedJob.id)}/steps -> ${replayedJob.status} on attempt ${replayedJob.attempts}, resumed at the refund:`,
  );
  printSteps(print, replayedSteps);
  print(
    `  label ${labelOf(replayedSteps)} is the dead letter's (the step did not run again); refund is the operator's value\n`,
  );
  return { deadLetter, deadLetterSteps, replayedJob, replayedSteps };
}

/**
 * Versions of a job's args: this deploy's orders.request_review takes version 2, `{ orderId, channel }`. A request
 * the previous deploy enqueued by name as version 1, `{ orderId }`, waits in the queue (review requests are
 * delayed); the worker passes it through the upcaster, so the handler gets version-2 args. The row keeps the args it
 * was enqueued with. (`soniq jobs upgrade orders.request_review` would rewrite such rows ahead of time.)
 */
async function upcastOldJob({ http, print, timeout }: Step, soniq: Soniq, order: Order): Promise<Job> {
  const oldArgs: OrderRef = { orderId: order.id };
  // What the previous deploy's producer did: enqueue by name, with the args' version.
  const { id } = await soniq.jobs.enqueue(JOB_NAMES.requestReview, oldArgs, { version: 1, delayMs: 300 });
  print(
    `The previous deploy enqueued ${JOB_NAMES.requestReview} ${short(id)} by name as version 1, ${JSON.stringify(oldArgs)}, due in 300 ms`,
  );
  print(
    '  this deploy\'s definition is version 2, { orderId, channel }, with upcast: { 1: (old) => ({ ...old, channel: "email" }) }',
  );
  const job = await waitFor("the version-1 review request to run", timeout, async () => {
    const res = await http.call<Job>("GET", `/jobs/${id}`);
    return res.body.status === "done" ? res.body : undefined;
  });
  print(
    `GET /jobs/${short(id)} -> ${job.status}: stored as version ${job.argsVersion} ${JSON.stringify(job.args)}; ` +
      `the handler got version 2 and answered ${JSON.stringify(job.result)}\n`,
  );
  return job;
}

async function finalState({ http, print }: Step, orderIds: string[]) {
  const stats = (await http.call<QueueStats>("GET", "/stats")).body;
  print(`GET /stats -> ${JSON.stringify(stats)}`);
  const orders = await Promise.all(
    orderIds.map(async (id) => (await http.call<Order>("GET", `/orders/${id}`)).body),
  );
  const yes = (d: Date | null) => (d ? "yes" : "no");
  for (const o of orders) {
    print(
      `  order ${short(o.id)} ${o.customer}: invoice ${o.invoiceNumber}, stock reserved: ${yes(o.stockReservedAt)}, ` +
        `receipt sent: ${yes(o.receiptSentAt)} (${o.email}), review requested: ${yes(o.reviewRequestedAt)}`,
    );
  }
  return { stats, orders };
}

async function tourSteps(
  step: Step,
  soniq: Soniq,
  workerLines: string[],
  started: number,
): Promise<TourSummary> {
  const { placed, rejectedStatus } = await placeOrders(step.http, step.print);
  const [{ order: ada }, { order: grace, jobIds: graceJobIds }] = placed as [Placed, Placed];
  const [adaFlowId, graceFlowId] = (await startFlows(step, [ada, grace])) as [string, string];
  const dead = await waitForJobs(step, ada, grace, graceJobIds);
  const heldFlow = await waitForHeld(step, graceFlowId);
  const { replayedJob, deadLetter } = await fixAndReplay(step, dead, grace);
  const resumedFlow = await resumeFlow(step, heldFlow);
  const adaFlow = (await step.http.call<Flow>("GET", `/flows/${adaFlowId}`)).body;
  const returns = await returnParcels(step, ada, grace);
  const upcastJob = await upcastOldJob(step, soniq, ada);
  const { stats, orders } = await finalState(step, [ada.id, grace.id]);
  checkOutcome(orders, replayedJob, deadLetter, [adaFlow, resumedFlow], returns, upcastJob);
  const elapsedMs = Date.now() - started;
  step.print(`\nTour finished in ${(elapsedMs / 1000).toFixed(1)} s.`);
  return {
    orders,
    rejectedStatus,
    deadLetter,
    replayedJob,
    adaFlow,
    heldFlow,
    resumedFlow,
    returns,
    upcastJob,
    stats,
    workerLines: [...workerLines],
    elapsedMs,
  };
}
