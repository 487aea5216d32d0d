/** The HTTP API's edges on SQLite: bad input is refused and writes nothing; unknown ids are 404s. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";
import { tempDir } from "./support.js";

describe("example/http", () => {
  const dir = tempDir();
  let app: App;
  let base = "";
  beforeAll(async () => {
    // No worker: these tests look at what the requests themselves write.
    app = await createApp({ database: { kind: "sqlite", location: dir.file() }, worker: false });
    base = await app.listen(0);
  });
  afterAll(async () => {
    await app.close();
    dir.remove();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("example/http-invalid-order: 400 with a reason, and no order or job is written", async () => {
    for (const [body, error] of [
      [{ customer: "Ada", email: "nope", totalCents: 100 }, "email must be an email address"],
      [{ customer: "Ada", email: "a@b.c", totalCents: 0 }, "totalCents must be a positive integer"],
      [{ email: "a@b.c", totalCents: 10 }, "customer must be a non-empty string"],
      ["{not json", "body must be JSON"],
    ] as const) {
      expect(await call("POST", "/orders", body)).toEqual({ status: 400, body: { error } });
    }
    expect((await call("GET", "/orders")).body.orders).toEqual([]);
    expect((await call("GET", "/stats")).body).toMatchObject({ total: 0 });
  });

  it("example/http-order-created: 201 with the order and the ids of its four queued jobs", async () => {
    const res = await call("POST", "/orders", {
      customer: " Ada ",
      email: "ada@example.com",
      totalCents: 4250,
    });
    expect(res.status).toBe(201);
    expect(res.body.order).toMatchObject({ customer: "Ada", email: "ada@example.com", totalCents: 4250 });
    const jobIds = res.body.jobIds as string[];
    expect(jobIds).toHaveLength(4);
    const job = await call("GET", `/jobs/${jobIds[0]}`);
    expect(job.body).toMatchObject({ jobName: "orders.send_invoice", status: "queued" });
    expect((await call("GET", "/stats")).body).toEqual({
      total: 4,
      queued: 4,
      processing: 0,
      done: 0,
      dead_letter: 0,
      cancelled: 0,
    });
  });

  it("example/http-not-found: unknown or malformed ids and routes answer 404, wrong methods 405", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    expect((await call("GET", `/orders/${missing}`)).status).toBe(404);
    expect((await call("GET", "/orders/not-a-uuid")).status).toBe(404);
    expect((await call("GET", `/jobs/${missing}`)).status).toBe(404);
    expect((await call("POST", `/dead-letters/${missing}/replay`)).status).toBe(404);
    expect((await call("PATCH", `/orders/${missing}`, { email: "a@b.c" })).status).toBe(404);
    expect((await call("GET", "/nope")).status).toBe(404);
    expect((await call("DELETE", "/orders")).status).toBe(405);
  });
});
