/** What opening a database reports when it fails: a missing native addon points at the build, not the file. */
import { isSoniqError } from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { openError } from "../src/internal/connection.js";
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
