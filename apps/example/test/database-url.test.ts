/** SONIQ_DATABASE_URL picks the backend; anything else is refused with a clear message. */
import { describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";
import { parseDatabaseUrl } from "../src/database.js";

describe("example/database-url", () => {
  it("example/database-url: postgres URLs, sqlite: paths, and the embedded default when unset", () => {
    expect(parseDatabaseUrl(undefined, "/x/soniq.db")).toEqual({ kind: "sqlite", location: "/x/soniq.db" });
    expect(parseDatabaseUrl("", "/x/soniq.db")).toEqual({ kind: "sqlite", location: "/x/soniq.db" });
    expect(parseDatabaseUrl("postgres://u@h/db", "d")).toEqual({
      kind: "postgres",
      location: "postgres://u@h/db",
    });
    expect(parseDatabaseUrl("postgresql://u@h/db", "d").kind).toBe("postgres");
    expect(parseDatabaseUrl("sqlite:./data/jobs.db", "d")).toEqual({
      kind: "sqlite",
      location: "./data/jobs.db",
    });
    expect(parseDatabaseUrl("sqlite:///tmp/jobs.db", "d")).toEqual({
      kind: "sqlite",
      location: "/tmp/jobs.db",
    });
    expect(() => parseDatabaseUrl("mysql://h/db", "d")).toThrow(/must start with postgres:\/\//);
    expect(() => parseDatabaseUrl("sqlite:", "d")).toThrow(/needs a path/);
  });

  it("example/config-defaults: apps/example/soniq.db, port 3000, worker in process", () => {
    const config = readConfig({});
    expect(config.database.kind).toBe("sqlite");
    expect(config.database.location).toMatch(/apps\/example\/soniq\.db$/);
    expect(config).toMatchObject({
      port: 3000,
      host: "127.0.0.1",
      inProcessWorker: true,
      reviewDelayMs: 10_000,
    });
    expect(readConfig({ SONIQ_EXAMPLE_WORKER: "off", PORT: "8080" })).toMatchObject({
      inProcessWorker: false,
      port: 8080,
    });
    expect(() => readConfig({ PORT: "abc" })).toThrow(/PORT must be an integer/);
  });
});
