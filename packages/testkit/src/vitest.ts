/** The vitest adapter: `await registerConformanceSuite({ runner: vitestRunner(), harness })` in a test file. */
import { describe, it } from "vitest";
import type { TestRunner } from "./types.js";

export function vitestRunner(): TestRunner {
  return {
    describe: (name, body) => describe(name, body),
    test: (name, fn, timeoutMs) => it(name, (ctx) => fn({ skip: (reason) => ctx.skip(reason) }), timeoutMs),
  };
}
