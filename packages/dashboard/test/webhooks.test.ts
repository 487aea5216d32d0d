/**
 * Webhook endpoints and deliveries in the JSON API and the pages: what they show (never a secret nor a
 * header value; lists without payloads; the app's `redact` on what a payload quotes of a job) and the one
 * write, redeliver, under the same rules as every other write.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { type Backend, verifyWebhookSignature } from "@soniq/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDatabase } from "./pgdb.js";
import { call, handlerFor, json, KEYS, login, ORIGIN, READ_KEY, WRITE_KEY } from "./support.js";
import {
  deliverUntil,
  ENDPOINT_SECRET,
  HEADER_TOKEN,
  SECRET_KEY,
  type WebhookSeeded,
  webhookApp,
} from "./webhook-support.js";

/** Each backend: a fresh store per test (the memory backend's, a SQLite file, a Postgres database). */
const targets: { name: string; make(): Promise<{ backend?: Backend<unknown>; cleanup(): Promise<void> }> }[] =
  [
    { name: "memory", make: async () => ({ cleanup: async () => {} }) },
    {
      name: "sqlite",
      async make() {
        const dir = mkdtempSync(join(tmpdir(), "soniq-dash-hooks-"));
        return {
          backend: sqliteBackend({ filename: join(dir, "soniq.db") }) as Backend<unknown>,
          cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
    },
    {
      name: "postgres",
      async make() {
        const db = await createDatabase("soniq_dash_hooks");
        return {
          backend: postgresBackend({ connectionString: db.url }) as Backend<unknown>,
          cleanup: () => db.drop(),
        };
      },
    },
  ];

describe.each(targets)("webhooks on $name", (target) => {
  let app: WebhookSeeded;
  let keyed: ReturnType<typeof handlerFor>;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const made = await target.make();
    cleanup = made.cleanup;
    app = await webhookApp({ redact: ["card"], ...(made.backend ? { backend: made.backend } : {}) });
    keyed = handlerFor(app.soniq, { apiKeys: KEYS });
  });
  afterEach(async () => {
    await app?.close();
    await cleanup?.();
  });

  type Row = Record<string, unknown>;
  const read = { key: READ_KEY } as const;
  const write = { method: "POST", key: WRITE_KEY } as const;

  /** Nothing the dashboard answers carries a secret or a header's value. */
  function expectNoSecrets(text: string): void {
    for (const secret of [ENDPOINT_SECRET, SECRET_KEY, HEADER_TOKEN, "header-token"]) {
      expect(text).not.toContain(secret);
    }
  }

  describe("webhook reads", () => {
    it("webhooks/endpoints: the list and the detail show the endpoint without its secret or header values", async () => {
      const list = await call(keyed, "/api/webhooks", read);
      expect(list.status).toBe(200);
      const listText = await list.text();
      expectNoSecrets(listText);
      const { endpoints } = JSON.parse(listText) as { endpoints: Row[] };
      expect(endpoints).toHaveLength(1);
      expect(endpoints[0]).toMatchObject({
        id: app.endpoint.id,
        url: app.receiver.url,
        events: ["job.dead_letter"],
        active: true,
        maxAttempts: 1,
        hasSecret: true,
        description: "ops pager",
        headers: { Authorization: "[hidden]" },
      });
      expect(endpoints[0]).not.toHaveProperty("secret");
      const detail = await call(keyed, `/api/webhooks/${app.endpoint.id}`, read);
      const detailText = await detail.text();
      expectNoSecrets(detailText);
      const body = JSON.parse(detailText) as { endpoint: Row; deliveries: Row[] };
      expect(body.endpoint.id).toBe(app.endpoint.id);
      expect(body.deliveries.map((d) => d.id).sort()).toEqual([...app.failed].sort());
      for (const page of ["/webhooks", `/webhooks/${app.endpoint.id}`]) {
        const res = await call(keyed, page, read);
        expect(res.status, page).toBe(200);
        const html = await res.text();
        expectNoSecrets(html);
        expect(html).toContain(app.receiver.url);
      }
      const detailPage = await (await call(keyed, `/webhooks/${app.endpoint.id}`, read)).text();
      expect(detailPage).toContain("<code>Authorization</code>");
    });

    it("webhooks/deliveries: status, attempts and last response; filters; lists carry no payload", async () => {
      const res = await call(keyed, "/api/webhook-deliveries?status=failed", read);
      const { deliveries } = await json<{ deliveries: Row[] }>(res);
      expect(deliveries).toHaveLength(2);
      for (const d of deliveries) {
        expect(d).toMatchObject({
          endpointId: app.endpoint.id,
          event: "job.dead_letter",
          status: "failed",
          attempts: 1,
          maxAttempts: 1,
          nextAttemptAt: null,
          responseStatus: 503,
        });
        expect(d).not.toHaveProperty("payload");
        expect(d).not.toHaveProperty("responseBody");
      }
      const none = await json<{ deliveries: Row[] }>(
        await call(keyed, "/api/webhook-deliveries?status=delivered", read),
      );
      expect(none.deliveries).toEqual([]);
      const byEndpoint = await json<{ deliveries: Row[] }>(
        await call(
          keyed,
          `/api/webhook-deliveries?endpointId=${app.endpoint.id}&event=job.dead_letter&limit=1`,
          read,
        ),
      );
      expect(byEndpoint.deliveries).toHaveLength(1);
      const page = await (await call(keyed, "/webhook-deliveries?status=failed", read)).text();
      expect(page.match(/data-status="failed"/g)).toHaveLength(2);
      expect(page).toContain("HTTP 503");
    });

    it("webhooks/delivery-detail: the payload with the app's redact, the response body; unknown ids 404", async () => {
      const id = app.failed[0] as string;
      const res = await call(keyed, `/api/webhook-deliveries/${id}`, read);
      const { delivery } = await json<{ delivery: Row & { payload: { data: Row } } }>(res);
      expect(delivery).toMatchObject({
        id,
        status: "failed",
        responseStatus: 503,
        responseBody: "receiver down",
      });
      expect(delivery.payload.data.jobName).toBe("billing.charge");
      expect(delivery.payload.data.args).toMatchObject({ card: "[redacted]" });
      const page = await (await call(keyed, `/webhook-deliveries/${id}`, read)).text();
      expect(page).toContain("receiver down");
      expect(page).not.toContain("4242424242424242");
      for (const path of [
        "/api/webhooks/00000000-0000-0000-0000-000000000000",
        "/api/webhooks/bad%20id",
        "/api/webhooks/not-a-uuid",
        "/api/webhook-deliveries/not-a-uuid",
        "/webhooks/not-a-uuid",
        "/api/webhook-deliveries/00000000-0000-0000-0000-000000000000",
        "/webhook-deliveries/00000000-0000-0000-0000-000000000000",
      ]) {
        expect((await call(keyed, path, read)).status, path).toBe(404);
      }
    });

    it("webhooks/escaped: an endpoint's description and a receiver's answer are text on the pages, never markup", async () => {
      const evil = '<img src=x onerror="alert(1)">';
      const other = await app.soniq.webhooks.register({
        url: `${app.receiver.url}?a=<b>`,
        events: ["job.failed"],
        secret: ENDPOINT_SECRET,
        description: evil,
      });
      for (const path of ["/webhooks", `/webhooks/${other.id}`]) {
        const html = await (await call(keyed, path, read)).text();
        expect(html, path).not.toContain(evil);
        expect(html, path).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
      }
    });

    it("webhooks/bad-query: a bad status or limit is 400, never 5xx", async () => {
      for (const q of ["status=lost", "limit=0", "limit=abc", "event=%00x"]) {
        expect((await call(keyed, `/api/webhook-deliveries?${q}`, read)).status, q).toBe(400);
        expect((await call(keyed, `/webhook-deliveries?${q}`, read)).status, q).toBe(400);
      }
    });
  });

  describe("redeliver", () => {
    const path = () => `/api/webhook-deliveries/${app.failed[0]}/redeliver`;

    it("redeliver/refusals: no keys, a read key, a foreign origin, a body with a key: refused, nothing changes", async () => {
      const open = handlerFor(app.soniq);
      expect((await call(open, path(), { method: "POST" })).status).toBe(403);
      expect((await call(keyed, path(), { method: "POST", key: READ_KEY })).status).toBe(403);
      expect((await call(keyed, path(), { ...write, origin: "https://evil.example" })).status).toBe(403);
      const session = await login(keyed, WRITE_KEY);
      const noToken = await call(keyed, path(), { method: "POST", cookie: session.cookie, origin: ORIGIN });
      expect(noToken.status).toBe(403);
      const withKey = await call(keyed, path(), { ...write, body: { force: true } });
      expect(withKey.status).toBe(400);
      expect((await app.soniq.webhooks.delivery(app.failed[0] as string))?.status).toBe("failed");
      expect(await app.soniq.audit.list({ action: "webhook.redeliver" })).toEqual([]);
    });

    it("redeliver/audited: a write key sends a failed delivery again, same id, audited with its label", {
      timeout: 30_000,
    }, async () => {
      const id = app.failed[0] as string;
      const res = await call(keyed, path(), write);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ redelivered: true, id });
      expect((await app.soniq.webhooks.delivery(id))?.status).toBe("pending");
      expect((await call(keyed, path(), write)).status).toBe(409); // pending: its attempts go on
      const [entry] = await app.soniq.audit.list({ action: "webhook.redeliver" });
      expect(entry).toMatchObject({ actor: "dashboard:ops", target: id });
      app.receiver.status = 200;
      const before = app.receiver.requests.length;
      await deliverUntil(app.soniq, async () => {
        expect((await app.soniq.webhooks.delivery(id))?.status).toBe("delivered");
      });
      const sent = app.receiver.requests.slice(before);
      expect(sent).toHaveLength(1);
      const request = sent[0] as (typeof sent)[number];
      expect(request.headers["x-webhook-delivery"]).toBe(id);
      expect(
        verifyWebhookSignature({
          payload: request.body,
          signature: String(request.headers["x-webhook-signature"]),
          timestamp: String(request.headers["x-webhook-timestamp"]),
          deliveryId: String(request.headers["x-webhook-delivery"]),
          event: String(request.headers["x-webhook-event"]),
          secret: ENDPOINT_SECRET,
        }),
      ).toBe(true);
      expect(
        (await call(keyed, "/api/webhook-deliveries/00000000-0000-0000-0000-000000000000/redeliver", write))
          .status,
      ).toBe(404);
      expect((await call(keyed, "/api/webhook-deliveries/not-a-uuid/redeliver", write)).status).toBe(404);
    });

    it("redeliver/session: a logged-in write key with the CSRF token redelivers", async () => {
      const session = await login(keyed, WRITE_KEY);
      const res = await call(keyed, path(), {
        method: "POST",
        cookie: session.cookie,
        origin: ORIGIN,
        headers: { "x-csrf-token": session.csrf },
        body: {},
      });
      expect(res.status).toBe(200);
      expect((await app.soniq.webhooks.delivery(app.failed[0] as string))?.status).toBe("pending");
    });
  });
});
