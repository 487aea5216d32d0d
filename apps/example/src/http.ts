/**
 * The HTTP API on node's http module:
 *   POST /orders                     create an order; its jobs are enqueued in the same transaction
 *   GET  /orders, GET /orders/:id    the orders, with what the jobs have done so far
 *   PATCH /orders/:id                correct an order's email address
 *   POST /orders/:id/fulfil          start the order's fulfilment flow (charge and reserve, ship, notify)
 *   GET  /flows/:id                  one flow with its steps and their states
 *   GET  /jobs/:id                   one job
 *   GET  /stats                      queue stats (the six keys)
 *   GET  /dead-letters               the dead-letter table, newest first
 *   POST /dead-letters/:id/replay    replay a dead-lettered job (a fresh job; the row stays, counted)
 *   GET  /health
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isJobId, isSoniqError, type Soniq, type SoniqErrorCode } from "@soniq/core";
import type { Fulfilment } from "./fulfilment.js";
import type { AppJobs } from "./jobs.js";
import type { NewOrder, OrderStore } from "./orders.js";

export interface Routes {
  soniq: Soniq;
  orders: OrderStore;
  jobs: AppJobs;
  fulfilment: Fulfilment;
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
const CLIENT_ERRORS = new Set<SoniqErrorCode>(["SONIQ_UNKNOWN_TASK_NAME", "SONIQ_DEAD_LETTER_CONFLICT"]);
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
      "GET",
      /^\/jobs\/([^/]+)$/,
      async (_req, [id]) => [200, found(await soniq.jobs.get(idParam(id, "job")), "job")],
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
      async (_req, [id]) => {
        const newJobId = found(
          await soniq.deadLetters.replay(idParam(id, "dead-letter job")),
          "dead-letter job",
        );
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
        if (isSoniqError(err) && CLIENT_ERRORS.has(err.code)) {
          return send(res, 409, { error: err.message, code: err.code });
        }
        console.error(err);
        send(res, 500, { error: "internal error" });
      });
  };
}
