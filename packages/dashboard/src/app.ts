/**
 * `dashboard({ soniq, apiKeys?, basePath? })`: a fetch handler over a Hono app with the JSON API
 * under /api, the HTML pages, the login form and the two bundled assets.
 */

import type { Context } from "hono";
import { Hono } from "hono";
import { bodyShapeFor } from "./api/bodies.js";
import { apiRoutes } from "./api/routes.js";
import { CLIENT_JS } from "./assets/client.js";
import { STYLES } from "./assets/styles.js";
import { Auth, SESSION_COOKIE } from "./auth.js";
import type { AppState, Env } from "./context.js";
import { DashboardError, errorBody, toDashboardError } from "./errors.js";
import { type DashboardOptions, resolveOptions } from "./options.js";
import { errorPage, loginPage } from "./pages/operations.js";
import { pageRoutes } from "./pages/routes.js";
import { readForm, readJsonBody } from "./security/body.js";
import { assertAllowedHost, clientOf, isSecure, socketAddressOf, whereOf } from "./security/hosts.js";
import { safeNext } from "./security/next.js";

/**
 * A standard fetch handler: mount it in node:http (serveDashboard), Express, Fastify, Hono, ... The optional
 * second argument is what a node:http adapter passes (`{ incoming }`, as `nodeListener` and
 * @hono/node-server do): the login limit counts failures per connection address from it.
 */
export type DashboardHandler = (request: Request, bindings?: unknown) => Promise<Response>;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function isApi(c: Context<Env>, base: string): boolean {
  return c.req.path === `${base}/api` || c.req.path.startsWith(`${base}/api/`);
}

function sessionCookie(state: AppState, c: Context<Env>, value: string, maxAgeS: number): string {
  const { basePath: base, hosts } = state.options;
  const secure = isSecure(whereOf(c.req.raw, hosts), hosts) ? "; Secure" : "";
  return `${SESSION_COOKIE}=${value}; Path=${base || "/"}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure}`;
}

function authRoutes(state: AppState, app: Hono<Env>): void {
  const base = state.options.basePath;
  app.get("/login", (c) => c.html(loginPage(base, safeNext(base, c.req.query("next")), null).value));
  app.post("/login", async (c) => {
    state.auth.assertOrigin(c.req.raw, false);
    const form = await readForm(c.req.raw);
    const next = safeNext(base, form.next);
    const key = typeof form.key === "string" ? form.key : "";
    const client = clientOf(c.req.raw, state.options.hosts, socketAddressOf(c.env));
    const login = state.auth.enabled ? state.auth.login(key, client) : null;
    if (!login) {
      const message = state.auth.enabled
        ? "That key is not valid."
        : "No API keys are configured: the dashboard is read-only and needs no login.";
      return c.html(loginPage(base, next, message).value, state.auth.enabled ? 401 : 400);
    }
    c.header("Set-Cookie", sessionCookie(state, c, login.id, Math.floor(state.options.sessionTtlMs / 1000)));
    return c.redirect(next, 303);
  });
  app.post("/logout", (c) => {
    state.auth.assertOrigin(c.req.raw, false);
    state.auth.logout(c.req.raw);
    c.header("Set-Cookie", sessionCookie(state, c, "", 0));
    return c.redirect(`${base}/login`, 303);
  });
}

function buildApp(state: AppState): Hono<Env> {
  const base = state.options.basePath;
  const root = new Hono<Env>();
  // Before anything is read or routed: a Host this dashboard does not serve gets nothing (DNS rebinding).
  root.use("*", async (c, next) => {
    assertAllowedHost(c.req.raw, state.options.hosts);
    await next();
  });
  const app = base ? root.basePath(base) : root;
  app.use("*", async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
    c.header("X-Frame-Options", "DENY");
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
  });
  app.get("/assets/app.js", (c) =>
    c.body(CLIENT_JS, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "max-age=300",
    }),
  );
  app.get("/assets/app.css", (c) =>
    c.body(STYLES, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "max-age=300" }),
  );
  authRoutes(state, app);
  app.use("/api/*", async (c, next) => {
    const principal = state.auth.identify(c.req.raw);
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") state.auth.assertRead(principal);
    else {
      state.auth.assertWrite(principal, c.req.raw);
      const route = c.req.path.slice(`${base}/api`.length);
      c.set("body", await readJsonBody(c.req.raw, bodyShapeFor(route)));
    }
    c.set("principal", principal as NonNullable<typeof principal>);
    await next();
  });
  app.route("/api", apiRoutes(state));
  app.use("*", async (c, next) => {
    const principal = state.auth.identify(c.req.raw);
    if (!principal) {
      const next_ = encodeURIComponent(c.req.path + (new URL(c.req.url).search || ""));
      return c.redirect(`${base}/login?next=${next_}`, 303);
    }
    c.set("principal", principal);
    await next();
  });
  app.route("/", pageRoutes(state));
  root.notFound((c) => {
    const err = new DashboardError("not_found", `Nothing at ${c.req.path}.`);
    return isApi(c, base)
      ? c.json(errorBody(err), 404)
      : c.html(errorPage(base, 404, err.message).value, 404);
  });
  root.onError((thrown, c) => {
    const err = toDashboardError(thrown, state.options.soniq.options.redact);
    if (err.status === 500) state.options.onError(thrown);
    if (err.code === "unauthorized") c.header("WWW-Authenticate", 'Bearer realm="soniq"');
    if (err.code === "rate_limited") c.header("Retry-After", String(err.details?.retryAfterS ?? 60));
    return isApi(c, base)
      ? c.json(errorBody(err), err.status)
      : c.html(errorPage(base, err.status, err.message).value, err.status);
  });
  return root;
}

export function dashboard(options: DashboardOptions): DashboardHandler {
  const resolved = resolveOptions(options);
  const app = buildApp({ options: resolved, auth: new Auth(resolved) });
  return async (request: Request, bindings?: unknown) => app.fetch(request, bindings);
}
