/**
 * The HTTP API on node's http module:
 *   POST /orders                     create an order; its jobs are enqueued in the same transaction
 *   GET  /orders, GET /orders/:id    the orders, with what the jobs have done so far
 *   PATCH /orders/:id                correct an order's email address
 *   POST /orders/:id/fulfil          start the order's fulfilment flow (charge and reserve, ship, notify)
 *   GET  /flows/:id                  one flow with its steps and their states
 *   POST /orders/:id/returns         start a return (one job with durable steps); its id is the job's id
 *   POST /returns/:id/received       the warehouse scanned the parcel: signals the return's job
 *   GET  /jobs/:id                   one job
 *   GET  /jobs/:id/steps             a job's (or dead letter's) durable-step timeline
 *   GET  /jobs/:id/explain           why a job is (not) running
 *   GET  /stats                      queue stats (the six keys)
 *   GET  /dead-letters               the dead-letter table, newest first
 *   POST /dead-letters/:id/replay    replay a dead-lettered job (a fresh job; the row stays, counted);
 *                                    optional body { steps: "keep" | "discard", resolve: { step: value } }
 *   GET  /health
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isJobId, isSoniqError, type Soniq, type SoniqErrorCode } from "@soniq/core";
import type { Fulfilment } from "./fulfilment.js";
import type { AppJobs } from "./jobs.js";
import type { NewOrder, OrderStore } from "./orders.js";
import { PARCEL_CONDITIONS, type ParcelScan, RETURN_JOB_NAME, type Returns } from "./returns.js";

export interface Routes {
  soniq: Soniq;
  orders: OrderStore;
  jobs: AppJobs;
  fulfilment: Fulfilment;
  returns: Returns;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Soniq errors caused by what the request asked for (e.g. replaying a job this app does not define). */
const CLIENT_ERRORS = new Map<SoniqErrorCode, number>([
  ["SONIQ_UNKNOWN_TASK_NAME", 409],
  ["SONIQ_DEAD_LETTER_CONFLICT", 409],
  ["SONIQ_JOB_FINISHED", 409], // a signal to a return that is over
  ["SONIQ_INVALID_OPTIONS", 400], // a replay's steps / resolve that Soniq refuses
  ["SONIQ_INVALID_ARGUMENT", 400],
]);
const MAX_BODY = 64 * 1024;

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, "body too large");
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
  } catch {
    throw new HttpError(400, "body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, "body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

function checkEmail(value: unknown): string {
  if (typeof value !== "string" || !/^[^@\s]+@[^@\s]+$/.test(value)) {
    throw new HttpError(400, "email must be an email address");
  }
  return value;
}

function parseNewOrder(body: Record<string, unknown>): NewOrder {
  const { customer, totalCents } = body;
  if (typeof customer !== "string" || customer.trim() === "") {
    throw new HttpError(400, "customer must be a non-empty string");
  }
  const email = checkEmail(body.email);
  if (!Number.isSafeInteger(totalCents) || (totalCents as number) <= 0) {
    throw new HttpError(400, "totalCents must be a positive integer");
  }
  return { customer: customer.trim(), email, totalCents: totalCents as number };
}

function parseScan(body: Record<string, unknown>): { scan: ParcelScan; scanId?: string } {
  const { condition, scanId } = body;
  if (!(PARCEL_CONDITIONS as readonly unknown[]).includes(condition)) {
    throw new HttpError(400, `condition must be one of ${PARCEL_CONDITIONS.join(", ")}`);
  }
  if (scanId !== undefined && (typeof scanId !== "string" || scanId === "")) {
    throw new HttpError(400, "scanId must be a non-empty string");
  }
  return { scan: { condition: condition as ParcelScan["condition"] }, scanId };
}

/** A replay's body: `{ steps?, resolve? }` passed on as they are (Soniq checks them: 400 when it refuses). */
function parseReplay(body: Record<string, unknown>): {
  steps?: "keep" | "discard";
  resolve?: Record<string, unknown>;
} {
  const extra = Object.keys(body).filter((key) => key !== "steps" && key !== "resolve");
  if (extra.length > 0) throw new HttpError(400, `unknown replay option ${extra[0]}`);
  return body as { steps?: "keep" | "discard"; resolve?: Record<string, unknown> };
}

function idParam(value: string | undefined, what: string): string {
  if (!value || !isJobId(value)) throw new HttpError(404, `no such ${what}`);
  return value;
}

type Handler = (req: IncomingMessage, params: string[]) => Promise<[status: number, body: unknown]>;

function routes({
  soniq,
  orders,
  jobs,
  fulfilment,
  returns,
}: Routes): [method: string, path: RegExp, handler: Handler][] {
  const found = <T>(value: T | null, what: string): T => {
    if (value === null) throw new HttpError(404, `no such ${what}`);
    return value;
  };
  return [
    ["GET", /^\/health$/, async () => [200, { ok: true }]],
    [
      "POST",
      /^\/orders$/,
      async (req) => {
        const input = parseNewOrder(await readJson(req));
        const { order, enqueued } = await orders.create(input, jobs.enqueueForNewOrder);
        return [201, { order, jobIds: enqueued.map((r) => r.id) }];
      },
    ],
    ["GET", /^\/orders$/, async () => [200, { orders: await orders.list(100) }]],
    [
      "GET",
      /^\/orders\/([^/]+)$/,
      async (_req, [id]) => [200, found(await orders.get(idParam(id, "order")), "order")],
    ],
    [
      "PATCH",
      /^\/orders\/([^/]+)$/,
      async (req, [id]) => {
        const email = checkEmail((await readJson(req)).email);
        return [200, found(await orders.updateEmail(idParam(id, "order"), email), "order")];
      },
    ],
    [
      "POST",
      /^\/orders\/([^/]+)\/fulfil$/,
      async (_req, [id]) => {
        const order = found(await orders.get(idParam(id, "order")), "order");
        const flow = await fulfilment.startFulfilment(order.id);
        return [202, { flowId: flow.id, jobIds: flow.jobs }];
      },
    ],
    [
      "GET",
      /^\/flows\/([^/]+)$/,
      async (_req, [id]) => [200, found(await soniq.flows.get(idParam(id, "flow")), "flow")],
    ],
    [
      "POST",
      /^\/orders\/([^/]+)\/returns$/,
      async (_req, [id]) => {
        const order = found(await orders.get(idParam(id, "order")), "order");
        return [202, { returnId: await returns.startReturn(order.id) }];
      },
    ],
    [
      "POST",
      /^\/returns\/([^/]+)\/received$/,
      async (req, [id]) => {
        const returnId = idParam(id, "return");
        const { scan, scanId } = parseScan(await readJson(req));
        // A return's id is its job's, or its dead letter's (a signal to a dead letter waits for its replay).
        const row = (await soniq.jobs.get(returnId)) ?? (await soniq.deadLetters.get(returnId));
        if (row?.jobName !== RETURN_JOB_NAME) throw new HttpError(404, "no such return");
        return [202, await returns.parcelReceived(returnId, scan, scanId)];
      },
    ],
    [
      "GET",
      /^\/jobs\/([^/]+)$/,
      async (_req, [id]) => [200, found(await soniq.jobs.get(idParam(id, "job")), "job")],
    ],
    [
      "GET",
      /^\/jobs\/([^/]+)\/steps$/,
      async (_req, [id]) => [200, { steps: await soniq.jobs.steps(idParam(id, "job")) }],
    ],
    [
      "GET",
      /^\/jobs\/([^/]+)\/explain$/,
      async (_req, [id]) => {
        const explanation = await soniq.jobs.explain(idParam(id, "job"));
        if (explanation.status === null) throw new HttpError(404, "no such job");
        return [200, explanation];
      },
    ],
    ["GET", /^\/stats$/, async () => [200, await soniq.jobs.stats()]],
    [
      "GET",
      /^\/dead-letters$/,
      async () => [200, { deadLetters: await soniq.deadLetters.list({ limit: 100 }) }],
    ],
    [
      "POST",
      /^\/dead-letters\/([^/]+)\/replay$/,
      async (req, [id]) => {
        const deadLetterId = idParam(id, "dead-letter job");
        const options = parseReplay(await readJson(req));
        const newJobId = found(await soniq.deadLetters.replay(deadLetterId, options), "dead-letter job");
        return [202, { replayedFrom: id, newJobId }];
      },
    ],
  ];
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** A request listener for `http.createServer`. Errors become JSON `{ error, code? }` answers. */
export function requestListener(deps: Routes) {
  const table = routes(deps);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const handle = async (): Promise<[number, unknown]> => {
      const matches = table.filter(([, pattern]) => pattern.test(path));
      if (matches.length === 0) throw new HttpError(404, `no route for ${path}`);
      const route = matches.find(([method]) => method === req.method);
      if (!route) throw new HttpError(405, `${req.method} is not allowed on ${path}`);
      const params = (route[1].exec(path) ?? []).slice(1);
      return route[2](req, params);
    };
    handle()
      .then(([status, body]) => send(res, status, body))
      .catch((err: unknown) => {
        if (err instanceof HttpError) return send(res, err.status, { error: err.message });
        const status = isSoniqError(err) ? CLIENT_ERRORS.get(err.code) : undefined;
        if (isSoniqError(err) && status !== undefined) {
          return send(res, status, { error: err.message, code: err.code });
        }
        console.error(err);
        send(res, 500, { error: "internal error" });
      });
  };
}
