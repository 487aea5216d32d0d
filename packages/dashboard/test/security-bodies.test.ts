/**
 * The size caps of issue 25, each reproduced against the handler: a login form and a JSON body are refused
 * with 413 after reading a bounded prefix (a declared length before reading any), and over a real socket a
 * 150 MB upload is answered early with the process's memory bounded.
 */
import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serveDashboard } from "../src/index.js";
import { type ErrorBody, KEYS, keyedOn, send, streamedBody } from "./security-support.js";
import { json, type Seeded, seededApp, WRITE_KEY } from "./support.js";

let app: Seeded;
beforeEach(async () => {
  app = await seededApp();
});
afterEach(() => app.soniq.close());

const keyed = () => keyedOn(app);

describe("body size", () => {
  it("security/login-body-cap: a 150 MB login form is refused with 413 after reading at most ~8 KiB", async () => {
    const big = streamedBody(150 * 1024 * 1024, 4096);
    const res = await send(keyed(), "http://dash.test/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://dash.test" },
      body: big.body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(big.pulled()).toBeLessThanOrEqual(8 * 1024 + 4096 * 2);
  });

  it("security/json-body-cap: a 20 MB JSON body is 413 after reading at most ~1 MiB; a declared one unread", async () => {
    const h = keyed();
    const big = streamedBody(20 * 1024 * 1024);
    const res = await send(h, "http://dash.test/api/dead-letters/purge-where", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${WRITE_KEY}` },
      body: big.body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await json<ErrorBody>(res)).error.code).toBe("payload_too_large");
    expect(big.pulled()).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024 * 2);
    const declared = streamedBody(20 * 1024 * 1024);
    const early = await send(h, "http://dash.test/api/dead-letters/purge-where", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(20 * 1024 * 1024),
        authorization: `Bearer ${WRITE_KEY}`,
      },
      body: declared.body,
      duplex: "half",
    } as RequestInit);
    expect(early.status).toBe(413);
    expect(declared.pulled()).toBeLessThanOrEqual(64 * 1024 * 2);
    expect((await app.soniq.jobs.stats()).dead_letter).toBe(3);
  });
});

/** Streams up to `total` bytes to `url` until the server answers; resolves with the status and bytes sent. */
function upload(url: string, total: number): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    let answered = false;
    const req = request(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin },
    });
    req.on("response", (res) => {
      answered = true;
      res.resume();
      resolve({ status: res.statusCode ?? 0, sent });
      req.destroy();
    });
    req.on("error", (err) => (answered ? undefined : reject(err)));
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe("body size over a real socket", () => {
  it("security/login-upload-memory: a 150 MB login upload is answered 413 early, memory bounded", async () => {
    const server = await serveDashboard({ soniq: app.soniq, apiKeys: KEYS, port: 0 });
    try {
      const before = process.memoryUsage().rss;
      const { status, sent } = await upload(`${server.url}/login`, 150 * 1024 * 1024);
      expect(status).toBe(413);
      expect(sent).toBeLessThan(150 * 1024 * 1024);
      expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await server.close();
    }
  });
});
