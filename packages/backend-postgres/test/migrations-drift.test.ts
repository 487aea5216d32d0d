import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const pkg = fileURLToPath(new URL("..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "soniq-drift-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// The committed migrations must be exactly what drizzle-kit generates from core's schema.
describe("migrations/drift", () => {
  it("drizzle-kit generate finds no change between the schema and drizzle/", () => {
    const out = join(tmp, "drizzle");
    cpSync(join(pkg, "drizzle"), out, { recursive: true });
    const before = readdirSync(out).sort();
    const kit = join(pkg, "node_modules", ".bin", "drizzle-kit");
    const log = execFileSync(
      kit,
      [
        "generate",
        "--dialect",
        "postgresql",
        "--schema",
        join(pkg, "../core/src/schema/pg.ts"),
        "--out",
        "./drizzle",
      ],
      // drizzle-kit resolves --out against the working directory, and exits 0 even on errors.
      { cwd: tmp, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    expect(
      readdirSync(out).sort(),
      "generate wrote a new migration: run pnpm db:generate and commit it",
    ).toEqual(before);
    expect(log).toContain("No schema changes");
  }, 60_000);
});
