import { EventEmitter } from "node:events";
import { describe, expect, test } from "vitest";
import { isPgError, recordIncident, takeIncidents, watchPg } from "../src/incidents.js";

describe("incidents", () => {
  test("incidents/pg-error-event-is-recorded-not-thrown", () => {
    takeIncidents();
    const pool = watchPg(new EventEmitter(), "counts pool");
    const err = Object.assign(new Error("terminating connection due to administrator command"), {
      severity: "FATAL",
      code: "57P01",
    });
    expect(() => pool.emit("error", err)).not.toThrow();
    expect(takeIncidents()).toEqual([
      "counts pool: terminating connection due to administrator command (57P01)",
    ]);
    expect(takeIncidents()).toEqual([]);
  });

  test("incidents/bounded", () => {
    for (let i = 0; i < 100; i++) recordIncident("poll", new Error("Connection terminated unexpectedly"));
    expect(takeIncidents()).toHaveLength(20);
  });

  test("incidents/only-pg-errors-are-survived", () => {
    expect(isPgError(Object.assign(new Error("x"), { severity: "ERROR", code: "40P01" }))).toBe(true);
    expect(isPgError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isPgError(new TypeError("cannot read properties of undefined"))).toBe(false);
    expect(isPgError(Object.assign(new Error("x"), { code: "ERR_IPC_CHANNEL_CLOSED" }))).toBe(false);
    expect(isPgError("Connection terminated")).toBe(false);
  });
});
