// #region snippet
import { describe, test } from "node:test";
import type { TestRunner } from "@soniq/testkit";

const runner: TestRunner = {
  describe: (name, body) => void describe(name, body),
  test: (name, fn, timeoutMs) =>
    void test(name, { timeout: timeoutMs }, (t) => fn({ skip: (r) => t.skip(r) })),
};
// #endregion snippet
