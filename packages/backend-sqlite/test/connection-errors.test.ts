/** What opening a database reports when it fails: a missing native addon points at the build, not the file. */
import { isSoniqError } from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { driverRuntimeError, openError } from "../src/internal/connection.js";
import { tempDir } from "./helpers.js";

// The first line of what better-sqlite3 (through `bindings`) throws when its addon was never built.
const NOT_BUILT = new Error(
  "Could not locate the bindings file. Tried:\n → /app/node_modules/better-sqlite3/build/better_sqlite3.node",
);
const OTHER_NODE = Object.assign(
  new Error("The module was compiled against a different Node.js version using NODE_MODULE_VERSION 127."),
  { code: "ERR_DLOPEN_FAILED" },
);

describe("sqlite/open-errors", () => {
  it("better-sqlite3 13 on Node 20: refused with the version to install, before it can crash the process", () => {
    const err = driverRuntimeError("./soniq.db", "13.2.0", "20.19.5");
    expect(err && isSoniqError(err, "SONIQ_BACKEND_ERROR")).toBe(true);
    expect(err?.context).toEqual({
      filename: "./soniq.db",
      reason: "driver_needs_newer_node",
      driver: "13.2.0",
      node: "20.19.5",
    });
    for (const hint of [
      "Node.js 22 or newer",
      "pnpm add better-sqlite3@^12",
      "npm install better-sqlite3@^12",
    ]) {
      expect(err?.message).toContain(hint);
    }
  });

  it("the versions that work together open: 12 on Node 20 and 24, 13 on Node 22 and 26", () => {
    for (const [driver, node] of [
      ["12.0.0", "20.19.0"],
      ["12.11.1", "24.21.0"],
      ["13.2.0", "22.12.0"],
      ["13.2.0", "26.10.0"],
    ] as const) {
      expect(driverRuntimeError("./soniq.db", driver, node)).toBeUndefined();
    }
  });

  for (const [label, cause] of [
    ["an addon that was never built", NOT_BUILT],
    ["an addon built for another Node.js", OTHER_NODE],
  ] as const) {
    it(`${label}: says how to get better-sqlite3 built, keeps the cause`, () => {
      const err = openError("./soniq.db", cause);
      expect(isSoniqError(err, "SONIQ_BACKEND_ERROR")).toBe(true);
      expect(err.cause).toBe(cause);
      expect(err.context).toEqual({ filename: "./soniq.db", reason: "native_binding_missing" });
      for (const hint of [
        "pnpm approve-builds",
        "allowBuilds",
        "onlyBuiltDependencies",
        "npm rebuild better-sqlite3",
      ]) {
        expect(err.message).toContain(hint);
      }
      expect(err.message).not.toContain("writable");
      expect(err.message).not.toContain("\n");
    });
  }

  it("a file that cannot be opened: names the path and its directory", () => {
    const tmp = tempDir();
    const filename = `${tmp.file()}-missing-dir/soniq.db`;
    const err = (() => {
      try {
        sqliteBackend({ filename });
      } catch (e) {
        return e;
      } finally {
        tmp.remove();
      }
    })();
    expect(isSoniqError(err, "SONIQ_BACKEND_ERROR")).toBe(true);
    expect((err as Error).message).toContain(filename);
    expect((err as Error).message).toContain("Check that its directory exists and is writable");
    expect((err as Error).message).not.toContain("approve-builds");
  });
});
