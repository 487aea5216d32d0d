/**
 * The scripted tour: starts the app on an ephemeral port with a worker in the same process, drives it
 * over HTTP like a client would, waits (bounded) for the jobs, and prints what happened. Returns what it
 * saw so the tests can check the same run.
 */
import type { DeadLetterJob, Flow, Job, QueueStats } from "@soniq/core";
import { shortId as short } from "@soniq/core/ops";
import { type App, createApp } from "./app.js";
import type { DatabaseTarget } from "./database.js";
import type { Order } from "./orders.js";
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
  stats: QueueStats;
  /** Worker lines, in order. */
  workerLines: string[];
  elapsedMs: number;
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
function checkOutcome(orders: Order[], replayedJob: Job, deadLetter: DeadLetterJob, flows: Flow[]): void {
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
}

export async function runTour(options: TourOptions): Promise<TourSummary> {
  const print = options.print ?? console.log;
  const timeout = options.stepTimeoutMs ?? 20_000;
  const started = Date.now();
  const workerLines: string[] = [];
  const app: App = await createApp({
    database: options.database,
    workerOptions: { concurrency: 5, pollIntervalMs: 50 },
    jobs: { warehouseFailures: 2, reviewDelayMs: 1500 },
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
    return await tourSteps({ http, print, timeout }, workerLines, started);
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

async function tourSteps(step: Step, workerLines: string[], started: number): Promise<TourSummary> {
  const { placed, rejectedStatus } = await placeOrders(step.http, step.print);
  const [{ order: ada }, { order: grace, jobIds: graceJobIds }] = placed as [Placed, Placed];
  const [adaFlowId, graceFlowId] = (await startFlows(step, [ada, grace])) as [string, string];
  const dead = await waitForJobs(step, ada, grace, graceJobIds);
  const heldFlow = await waitForHeld(step, graceFlowId);
  const { replayedJob, deadLetter } = await fixAndReplay(step, dead, grace);
  const resumedFlow = await resumeFlow(step, heldFlow);
  const adaFlow = (await step.http.call<Flow>("GET", `/flows/${adaFlowId}`)).body;
  const { stats, orders } = await finalState(step, [ada.id, grace.id]);
  checkOutcome(orders, replayedJob, deadLetter, [adaFlow, resumedFlow]);
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
    stats,
    workerLines: [...workerLines],
    elapsedMs,
  };
}
