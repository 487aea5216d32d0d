// #region snippet
import type { TestRunner } from "@soniq/testkit";
import { describe, it } from "vitest";

const runner: TestRunner = {
  describe: (name, body) => describe(name, body),
  test: (name, fn, timeoutMs) => it(name, (t) => fn({ skip: (reason) => t.skip(reason) }), timeoutMs),
};
// #endregion snippet
