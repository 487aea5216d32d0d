/**
 * Test helpers: a Soniq app on a chosen backend, seeded with done, failed, queued and dead-lettered
 * jobs, a dashboard handler over it, and `call()` to send requests to the handler without a server.
 */
import { memoryBackend } from "@soniq/backend-memory";
import { type Backend, PermanentError, Soniq } from "@soniq/core";
import { type ManualClock, manualClock } from "@soniq/testkit";
import {
  type DashboardApiKey,
  type DashboardHandler,
  type DashboardOptions,
  dashboard,
} from "../src/index.js";

export const ORIGIN = "http://dash.test";
export const WRITE_KEY = "write-key-0123456789abcdef";
export const READ_KEY = "read-key-0123456789abcdef";
export const KEYS: DashboardApiKey[] = [
  { key: WRITE_KEY, label: "ops", scope: "write" },
  { key: READ_KEY, label: "viewer", scope: "read" },
];

export interface Seeded {
  soniq: Soniq;
  done: string[];
  /** Jobs that failed once and wait for their retry (queued, with a last error). */
  retrying: string[];
  /** Dead-letter ids (PermanentError with the text "card declined"). */
  dead: string[];
  /** Queued on queue "reports". */
  reports: string[];
}

export async function seededApp(backend: Backend<unknown> = memoryBackend()): Promise<Seeded> {
  const soniq = new Soniq({ backend });
  await soniq.setup();
  const send = soniq.job("emails.send_welcome", async (args: { to: string }) => ({ sent: args.to }));
  const charge = soniq.job(
    "billing.charge",
    async (args: { cents: number }) => {
      if (args.cents < 0) throw new PermanentError(`card declined for ${args.cents}`);
      throw new Error("gateway timeout");
    },
    { retry: { delaysMs: [3_600_000] } },
  );
  const report = soniq.job("reports.build", async () => ({ ok: true }), { queue: "reports" });
  const done: string[] = [];
  for (let i = 0; i < 12; i++) done.push((await send.enqueue({ to: `user${i}@example.com` })).id);
  const retrying = [(await charge.enqueue({ cents: 500 })).id];
  const failing: string[] = [];
  for (let i = 1; i <= 3; i++) failing.push((await charge.enqueue({ cents: -i })).id);
  await soniq.worker({ queues: ["default"] }).runOnce({ maxJobs: 100 });
  const reports = [(await report.enqueue({})).id, (await report.enqueue({})).id];
  return { soniq, done, retrying, dead: failing, reports };
}

export const SCHEDULE_START = new Date("2026-03-28T10:00:00Z");

export interface Scheduled {
  soniq: Soniq;
  clock: ManualClock;
  /** Job ids the hourly schedule fired on its own (oldest first). */
  fired: string[];
}

/**
 * Two stored schedules on the memory backend with a manual clock: `reports.hourly` (every hour, on queue
 * "reports", args `{ kind: "hourly" }`) has fired three ticks; `reports.nightly` (cron 0 2 * * * in
 * Europe/Berlin) has not fired yet. No timers: the scheduler is checked by hand.
 */
export async function scheduledApp(): Promise<Scheduled> {
  const clock = manualClock(SCHEDULE_START);
  const soniq = new Soniq({ backend: memoryBackend({ now: clock.now }), clock });
  await soniq.setup();
  const report = soniq.job("reports.build", async (args: { kind: string }) => ({ built: args.kind }));
  soniq.schedules.declare(report, {
    name: "reports.hourly",
    every: "1h",
    args: { kind: "hourly" },
    queue: "reports",
  });
  soniq.schedules.declare(report, {
    name: "reports.nightly",
    cron: "0 2 * * *",
    timezone: "Europe/Berlin",
    args: { kind: "nightly" },
  });
  const scheduler = soniq.scheduler({ checkIntervalMs: 60_000 });
  await scheduler.check(); // stores both; nothing is due yet
  for (let i = 0; i < 3; i++) {
    await clock.advance(3_600_000);
    await scheduler.check();
  }
  await scheduler.stop();
  const ticks = await soniq.schedules.history("reports.hourly", { limit: 10 });
  const fired = ticks
    .filter((t) => t.outcome === "fired" && t.jobId !== null)
    .map((t) => t.jobId as string)
    .reverse();
  return { soniq, clock, fired };
}

/** The tests call the handler at http://dash.test, so that host is allowed besides the loopback names. */
export function handlerFor(soniq: Soniq, options: Partial<DashboardOptions> = {}): DashboardHandler {
  return dashboard({ soniq, allowedHosts: ["dash.test"], ...options });
}

export interface CallInit {
  method?: string;
  body?: unknown;
  key?: string;
  cookie?: string;
  origin?: string | null;
  headers?: Record<string, string>;
}

export async function call(handler: DashboardHandler, path: string, init: CallInit = {}): Promise<Response> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.cookie) headers.cookie = init.cookie;
  if (init.origin) headers.origin = init.origin;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    headers["content-type"] ??= "application/json";
  }
  return handler(
    new Request(`${ORIGIN}${path}`, { method: init.method ?? (body ? "POST" : "GET"), headers, body }),
  );
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Logs in through the form and returns the cookie header and the page's CSRF token. */
export async function login(
  handler: DashboardHandler,
  key: string,
): Promise<{ cookie: string; csrf: string }> {
  const res = await call(handler, "/login", {
    method: "POST",
    body: new URLSearchParams({ key, next: "/" }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
    origin: ORIGIN,
  });
  if (res.status !== 303) throw new Error(`login answered ${res.status}`);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const page = await (await call(handler, "/", { cookie })).text();
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? "";
  return { cookie, csrf };
}
