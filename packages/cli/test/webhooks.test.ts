/**
 * `soniq webhooks ...` on SQLite and PostgreSQL, against a local receiver (127.0.0.1 only, bounded): add
 * (the key from SONIQ_SECRET_KEY, the secret from a variable), list, test, deliveries, redeliver, remove,
 * reseal (a keyring from SONIQ_SECRET_KEYS and SONIQ_SECRET_KEY_ID); refusals exit with their codes and write
 * nothing; no secret, key or header value is ever printed.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { PermanentError, type Soniq, verifyWebhookSignature } from "@soniq/core";
import { eventually } from "@soniq/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  expectNoRunningChildren,
  json,
  openApp,
  type Result,
  soniqCli,
  type TestDb,
} from "./cli.js";
import { BACKENDS } from "./seed.js";

const REDACTED_APP = fileURLToPath(new URL("./fixtures/redacted.ts", import.meta.url));
const SECRET_KEY = "cli-test-secret-key-0123456789abcdef";
const HOOK_SECRET = "endpoint-signing-secret-cli-0123";
const TOKEN = "Bearer cli-header-token-never-printed";
const NEW_KEY = "cli-rotated-secret-key-fedcba9876543210";

interface Receiver {
  url: string;
  status: number;
  requests: { headers: IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** A local receiver answering `status`; it keeps at most 100 requests of at most 64 kB each. */
async function receiver(status: number): Promise<Receiver> {
  const r = { status, requests: [] } as unknown as Receiver;
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      if (body.length < 65_536) body += chunk.slice(0, 65_536 - body.length);
    });
    req.on("end", () => {
      if (r.requests.length < 100) r.requests.push({ headers: req.headers, body });
      res.writeHead(r.status).end(r.status < 300 ? "ok" : "receiver down");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

function expectNothingSecret(r: Result): void {
  for (const secret of [HOOK_SECRET, SECRET_KEY, NEW_KEY, TOKEN, "cli-header-token"]) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
}

const signed = (request: Receiver["requests"][number], secret: string): boolean =>
  verifyWebhookSignature({
    payload: request.body,
    signature: String(request.headers["x-webhook-signature"]),
    timestamp: String(request.headers["x-webhook-timestamp"]),
    deliveryId: String(request.headers["x-webhook-delivery"]),
    event: String(request.headers["x-webhook-event"]),
    secret,
  });

describe.each(BACKENDS)("soniq webhooks on %s", (_kind, makeDb) => {
  let db: TestDb;
  let app: Soniq;
  let hook: Receiver;
  /** Runs the binary on this database with SONIQ_SECRET_KEY and HOOK_SECRET set (and `env` over them). */
  const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
    soniqCli([...args, "--database-url", db.url], {
      cwd: db.dir,
      env: { SONIQ_SECRET_KEY: SECRET_KEY, HOOK_SECRET, ...env },
    });
  const add = (...extra: string[]) =>
    cli([
      "webhooks",
      "add",
      hook.url,
      "--events",
      "job.dead_letter",
      "--secret-env",
      "HOOK_SECRET",
      ...extra,
    ]);

  beforeAll(async () => {
    assertBuilt();
    db = makeDb();
    await db.create();
    const setup = await soniqCli(["setup", "--database-url", db.url], { cwd: db.dir });
    expect(setup.code, setup.stderr).toBe(0);
    app = await openApp(db, true, {
      webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true, refreshMs: 50 },
    });
    hook = await receiver(200);
  });

  afterAll(async () => {
    expectNoRunningChildren();
    await app?.close();
    await hook?.close();
    await db?.drop();
  });

  it("webhooks/help: the group and every subcommand have --help with examples", async () => {
    for (const sub of ["", "list", "add", "remove", "deliveries", "redeliver", "test", "reseal"]) {
      const r = await soniqCli(["webhooks", ...(sub ? [sub] : []), "--help"], { cwd: db.dir });
      expect(r.code, sub).toBe(0);
      expect(r.stdout, sub).toContain("Examples:");
    }
  });

  it("webhooks/add-refused: no key, a loopback target, an unknown event, no secret: exit codes, nothing written", async () => {
    const withoutKey = await cli(
      [
        "webhooks",
        "add",
        hook.url,
        "--events",
        "job.failed",
        "--secret-env",
        "HOOK_SECRET",
        "--allow-private-networks",
      ],
      { SONIQ_SECRET_KEY: undefined },
    );
    expect(withoutKey.code).toBe(2);
    expect(withoutKey.stderr).toContain("SONIQ_SECRET_KEY");
    const loopback = await add();
    expect(loopback.code).toBe(1);
    expect(loopback.stderr).toContain("SONIQ_WEBHOOK_TARGET_REFUSED");
    const badEvent = await cli([
      "webhooks",
      "add",
      hook.url,
      "--events",
      "job.exploded",
      "--secret-env",
      "HOOK_SECRET",
      "--allow-private-networks",
    ]);
    expect(badEvent.code).toBe(2);
    expect(badEvent.stderr).toContain("job.exploded");
    const noSecret = await cli([
      "webhooks",
      "add",
      hook.url,
      "--events",
      "job.failed",
      "--allow-private-networks",
    ]);
    expect(noSecret.code).toBe(2);
    const unsetVar = await cli([
      "webhooks",
      "add",
      hook.url,
      "--events",
      "job.failed",
      "--secret-env",
      "NOT_SET_HERE",
      "--allow-private-networks",
    ]);
    expect(unsetVar.code).toBe(2);
    for (const r of [withoutKey, loopback, badEvent, noSecret, unsetVar]) expectNothingSecret(r);
    expect(await app.webhooks.list()).toEqual([]);
  });

  it("webhooks/add-list-test-remove: the endpoint as registered, header values hidden, a signed test, audited", async () => {
    hook.status = 200;
    const added = await add(
      "--allow-private-networks",
      "--header",
      `Authorization: ${TOKEN}`,
      "--max-attempts",
      "3",
      "--timeout",
      "2s",
      "--description",
      "pager",
      "--json",
    );
    expect(added.code, added.stderr).toBe(0);
    expectNothingSecret(added);
    const endpoint = json<{ id: string; headers: Record<string, string> }>(added);
    expect(endpoint).toMatchObject({
      url: hook.url,
      events: ["job.dead_letter"],
      maxAttempts: 3,
      timeoutMs: 2000,
      description: "pager",
      hasSecret: true,
      headers: { Authorization: "[hidden]" },
    });
    const stored = await app.webhooks.get(endpoint.id);
    expect(stored?.headers).toEqual({ Authorization: TOKEN });

    const listed = await cli(["webhooks", "list", "--json"]);
    expect(json<{ id: string }[]>(listed).map((e) => e.id)).toEqual([endpoint.id]);
    const table = await cli(["webhooks", "list"]);
    expect(table.stdout).toContain(hook.url);
    expect(table.stdout).toContain("Authorization");
    for (const r of [listed, table]) expectNothingSecret(r);

    const before = hook.requests.length;
    const ok = await cli(["webhooks", "test", endpoint.id, "--allow-private-networks"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok: HTTP 200 in \d+ ms/);
    const request = hook.requests[before] as Receiver["requests"][number];
    expect(request.headers["x-webhook-event"]).toBe("webhook.test");
    expect(request.headers.authorization).toBe(TOKEN);
    expect(signed(request, HOOK_SECRET)).toBe(true);
    hook.status = 503;
    const down = await cli(["webhooks", "test", endpoint.id, "--allow-private-networks", "--json"]);
    expect(down.code).toBe(1);
    expect(json(down)).toMatchObject({ id: endpoint.id, ok: false, status: 503 });
    for (const r of [ok, down]) expectNothingSecret(r);
    expect((await cli(["webhooks", "test", "00000000-0000-0000-0000-000000000000"])).code).toBe(1);

    const removed = await cli(["webhooks", "remove", endpoint.id, "--json"]);
    expect(json(removed)).toEqual({ id: endpoint.id, removed: true });
    const again = await cli(["webhooks", "remove", endpoint.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("SONIQ_CLI_NOT_FOUND");
    const actions = (await app.audit.list({ limit: 20 }))
      .filter((e) => e.target === endpoint.id)
      .map((e) => `${e.action} ${e.outcome}`);
    expect(actions).toEqual([
      "webhook.remove not_found",
      "webhook.remove ok",
      "webhook.test failed",
      "webhook.test ok",
      "webhook.register ok",
    ]);
    for (const entry of await app.audit.list({ limit: 20 })) expect(entry.actor).toMatch(/^cli:/);
  });

  it("webhooks/deliveries-redeliver: a failed delivery listed with its answer; redeliver sends it again, same id", async () => {
    hook.status = 503;
    const endpoint = await app.webhooks.register({
      url: hook.url,
      events: ["job.dead_letter"],
      secret: HOOK_SECRET,
      maxAttempts: 1,
      timeoutMs: 2000,
    });
    app.job("test.hook_fail", async () => {
      throw new PermanentError("no such card");
    });
    const job = await app.jobs.enqueue("test.hook_fail", {}, { queue: "hooks" });
    const worker = app.worker({ queues: ["hooks"], pollIntervalMs: 50 });
    await worker.start();
    try {
      await eventually(
        async () => expect(await app.webhooks.deliveries({ status: "failed" })).toHaveLength(1),
        {
          timeoutMs: 20_000,
        },
      );
    } finally {
      await worker.stop();
    }
    const listed = await cli(["webhooks", "deliveries", "--status", "failed", "--json"]);
    const rows = json<Record<string, unknown>[]>(listed);
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    expect(row).toMatchObject({
      endpointId: endpoint.id,
      event: "job.dead_letter",
      status: "failed",
      attempts: 1,
      maxAttempts: 1,
      responseStatus: 503,
      nextAttemptAt: null,
    });
    expect((row.payload as { data: { jobId: string } }).data.jobId).toBe(job.id);
    const id = row.id as string;
    const table = await cli(["webhooks", "deliveries", "--endpoint", endpoint.id]);
    expect(table.stdout).toMatch(/failed\s+1\/1\s+HTTP 503/);
    expect((await cli(["webhooks", "deliveries", "--status", "lost"])).code).toBe(2);

    const unknown = await cli(["webhooks", "redeliver", "00000000-0000-0000-0000-000000000000", id]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("SONIQ_CLI_NOT_FOUND");
    expect((await app.webhooks.delivery(id))?.status).toBe("failed");
    const redelivered = await cli(["webhooks", "redeliver", id, "--json"]);
    expect(json(redelivered)).toEqual([{ id, redelivered: true }]);
    expect((await app.webhooks.delivery(id))?.status).toBe("pending");
    const pending = await cli(["webhooks", "redeliver", id]);
    expect(pending.code).toBe(1);
    expect(pending.stderr).toContain("SONIQ_CLI_REFUSED");
    const [entry] = await app.audit.list({ action: "webhook.redeliver" });
    expect(entry).toMatchObject({ target: id, actor: expect.stringMatching(/^cli:/) });

    hook.status = 200;
    const before = hook.requests.length;
    const sender = app.worker({ queues: ["hooks"], pollIntervalMs: 50 });
    await sender.start();
    try {
      await eventually(async () => expect((await app.webhooks.delivery(id))?.status).toBe("delivered"), {
        timeoutMs: 20_000,
      });
    } finally {
      await sender.stop();
    }
    const sent = hook.requests.slice(before);
    expect(sent.map((r) => r.headers["x-webhook-delivery"])).toEqual([id]);
    expect(signed(sent[0] as Receiver["requests"][number], HOOK_SECRET)).toBe(true);
  });

  it("webhooks/module-redact: with --module, what a payload quotes of a job goes through the app's redact", async () => {
    const endpoint = await app.webhooks.register({
      url: hook.url,
      events: ["job.failed"],
      secret: HOOK_SECRET,
    });
    const id = randomUUID();
    await app.backend.webhooks.enqueue([
      {
        id,
        endpointId: endpoint.id,
        event: "job.failed",
        maxAttempts: 1,
        payload: {
          event: "job.failed",
          timestamp: new Date().toISOString(),
          data: { jobId: randomUUID(), jobName: "secret.login", args: { user: "ann", password: "hunter2" } },
          metadata: { source: "soniq" },
        },
      },
    ]);
    const args = ["webhooks", "deliveries", "--endpoint", endpoint.id, "--json"];
    const redacted = await cli([...args, "--module", REDACTED_APP], { SONIQ_DATABASE_URL: db.url });
    expect(redacted.code, redacted.stderr).toBe(0);
    expect(redacted.stdout).not.toContain("hunter2");
    expect(redacted.stdout).toContain('"password": "[redacted]"');
    expect((await cli(args)).stdout).toContain("hunter2"); // no module, no redact: as stored
    await app.webhooks.remove(endpoint.id);
  });

  // Last: the re-seal rewrites every endpoint's secret under k2, which `app` (SECRET_KEY only) cannot open.
  it("webhooks/reseal: a keyring from SONIQ_SECRET_KEYS re-seals a secret stored under the single key; dry run first; it still signs; audited", async () => {
    for (const e of await app.webhooks.list()) await app.webhooks.remove(e.id);
    const ring = { SONIQ_SECRET_KEY: undefined, SONIQ_SECRET_KEYS: `k1:${SECRET_KEY},k2:${NEW_KEY}` };
    const rotated = { ...ring, SONIQ_SECRET_KEY_ID: "k2" };
    const added = await add("--allow-private-networks", "--json");
    expect(added.code, added.stderr).toBe(0);
    const { id } = json<{ id: string }>(added);
    const cipher = async () => (await app.backend.webhooks.getEndpoint(id))?.secretCipher ?? "";
    const sealedByAdd = await cipher();
    expect(sealedByAdd).toMatch(/^v1\./);

    const dry = await cli(["webhooks", "reseal", "--dry-run", "--json"], rotated);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry)).toEqual({ keyId: "k2", resealed: [id], alreadyCurrent: 0, failed: [], dryRun: true });
    expect(await cipher()).toBe(sealedByAdd);

    const done = await cli(["webhooks", "reseal"], rotated);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain("re-sealed 1 endpoint secret(s) under key k2; 0 already under it");
    expect(done.stdout).toContain(id);
    expect(await cipher()).toMatch(/^v2\.k2\./);
    const again = await cli(["webhooks", "reseal", "--json"], rotated);
    expect(json(again)).toMatchObject({ keyId: "k2", resealed: [], alreadyCurrent: 1, failed: [] });

    // The new key alone opens it and signs with the endpoint's own secret; the old key alone no longer does.
    hook.status = 200;
    const before = hook.requests.length;
    const ok = await cli(["webhooks", "test", id, "--allow-private-networks"], {
      SONIQ_SECRET_KEY: undefined,
      SONIQ_SECRET_KEYS: `k2:${NEW_KEY}`,
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(signed(hook.requests[before] as Receiver["requests"][number], HOOK_SECRET)).toBe(true);
    const old = await cli(["webhooks", "reseal"]);
    expect(old.code).toBe(1);
    expect(old.stdout).toMatch(new RegExp(`failed: ${id} \\(key k2\\): .*key "k2"`));

    const refused = [
      await cli(["webhooks", "reseal"], ring), // two keys, no SONIQ_SECRET_KEY_ID
      await cli(["webhooks", "reseal"], { ...rotated, SONIQ_SECRET_KEY: SECRET_KEY }), // both variables
      await cli(["webhooks", "reseal"], { ...rotated, SONIQ_SECRET_KEY_ID: "k3" }),
      await cli(["webhooks", "reseal"], { ...rotated, SONIQ_SECRET_KEYS: `k1=${SECRET_KEY}` }),
      await cli(["webhooks", "reseal"], { ...rotated, SONIQ_SECRET_KEYS: "k2:short" }),
    ];
    for (const r of refused) expect(r.code, r.stderr).toBe(2);
    expect(refused[0]?.stderr).toContain("SONIQ_SECRET_KEY_ID");
    for (const r of [added, dry, done, again, ok, old, ...refused]) expectNothingSecret(r);
    const audit = (await app.audit.list({ action: "webhook.reseal" })).filter((e) => e.target === id);
    expect(audit.map((e) => [e.outcome, e.params])).toEqual([
      ["failed", { fromKeyId: "k2", toKeyId: null }],
      ["ok", { fromKeyId: null, toKeyId: "k2" }],
      ["dry_run", { fromKeyId: null, toKeyId: "k2" }],
    ]);
    for (const e of audit) expect(e.actor).toMatch(/^cli:/);
  });
});
