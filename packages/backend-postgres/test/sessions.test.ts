/**
 * The backend's own connections: lease rows across backends, LISTEN reconnecting after its connection
 * is killed, pool ownership, and the UTC session setting.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { resolveConnection } from "../src/internal/pool.js";
import { eventually, newJob, useMigratedBackend } from "./pgdb.js";

const fx = useMigratedBackend();

describe("leases", () => {
  it("one holder across two backends; released on leases.release, not by the holder's close", async () => {
    const other = postgresBackend({ connectionString: fx.db.url });
    const name = `lease-${randomUUID()}`;
    try {
      expect(await fx.backend.leases.tryAcquire(name, "a", 10_000)).toBe(true);
      expect(await fx.backend.leases.tryAcquire(name, "a", 10_000)).toBe(true);
      expect(await fx.backend.leases.tryAcquire(name, "b", 10_000)).toBe(false);
      expect(await other.leases.tryAcquire(name, "c", 10_000)).toBe(false);
      await fx.backend.leases.release(name, "a");
      expect(await other.leases.tryAcquire(name, "c", 10_000)).toBe(true);
      expect(await fx.backend.leases.tryAcquire(name, "a", 10_000)).toBe(false);
      // A lease is a row (pooler-safe): a holder that goes away keeps it until its TTL passes.
      await other.close();
      expect(await fx.backend.leases.tryAcquire(name, "a", 10_000)).toBe(false);
    } finally {
      await other.close();
    }
  });

  it("a lease not renewed within its TTL is released for other holders", async () => {
    const other = postgresBackend({ connectionString: fx.db.url });
    const name = `lease-${randomUUID()}`;
    try {
      expect(await fx.backend.leases.tryAcquire(name, "a", 200)).toBe(true);
      expect(await other.leases.tryAcquire(name, "b", 10_000)).toBe(false);
      await eventually(async () => other.leases.tryAcquire(name, "b", 10_000));
      expect(await fx.backend.leases.tryAcquire(name, "a", 10_000)).toBe(false);
    } finally {
      await other.close();
    }
  });
});

describe("LISTEN", () => {
  it("wakes subscribers with the queue name, and reconnects after its connection is killed", async () => {
    const listening = postgresBackend({ connectionString: fx.db.url });
    const heard: string[] = [];
    const unsubscribe = await listening.wakeUps.subscribe((queue) => heard.push(queue));
    try {
      await fx.backend.jobs.enqueue(newJob({ queue: "listen_a" }), {});
      await eventually(() => heard.includes("listen_a"));
      await fx.admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN soniq_new_job'",
      );
      // Keep enqueueing until the re-established LISTEN hears one.
      await eventually(async () => {
        await fx.backend.jobs.enqueue(newJob({ queue: "listen_b" }), {});
        return heard.includes("listen_b");
      }, 10_000);
    } finally {
      await unsubscribe();
      await listening.close();
    }
  });
});

describe("ownership", () => {
  it("never ends a pool it was given; ends the one it created", async () => {
    const pool = new pg.Pool({ connectionString: fx.db.url });
    pool.on("error", () => {});
    const given = postgresBackend({ pool });
    await given.jobs.stats({ queue: null });
    await given.close();
    await given.close();
    expect((await pool.query("SELECT 1 AS one")).rows[0]?.one).toBe(1);
    await pool.end();

    const owned = postgresBackend({ connectionString: fx.db.url });
    await owned.jobs.stats({ queue: null });
    await owned.close();
    await expect(owned.jobs.stats({ queue: null })).rejects.toThrow();
  });

  it("sessions it opens run in UTC", async () => {
    const { pool, listenConfig } = resolveConnection({ connectionString: fx.db.url });
    const client = new pg.Client(listenConfig);
    await client.connect();
    try {
      expect((await client.query("SHOW TimeZone")).rows[0]?.TimeZone).toBe("UTC");
      expect((await pool.query("SHOW TimeZone")).rows[0]?.TimeZone).toBe("UTC");
    } finally {
      await client.end();
      await pool.end();
    }
  });
});
