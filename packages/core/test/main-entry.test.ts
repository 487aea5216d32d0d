import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Core's main entry must load without drizzle-orm (an optional peer) and without any driver.
describe("core/main-entry", () => {
  it("imports nothing from drizzle-orm or a driver, transitively", async () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, "utf8");
      for (const m of source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)) {
        const spec = m[1] as string;
        const typeOnly = /^\s*(?:import|export)\s+type\s/.test(m[0]);
        if (spec.startsWith("."))
          visit(fileURLToPath(new URL(spec.replace(/\.js$/, ".ts"), `file://${file}`)));
        else if (!typeOnly)
          expect(spec, `${file} imports ${spec}`).not.toMatch(/^(drizzle-orm|pg|better-sqlite3)(\/|$)/);
      }
    };
    visit(fileURLToPath(new URL("../src/index.ts", import.meta.url)));
    expect(seen.size).toBeGreaterThan(1);
  });
});
