/**
 * Prints one closing line, `Tests: N passed, N failed, N skipped`, after vitest's own report, so CI
 * can read the result. A test file that failed to load or whose hooks failed counts as one failure, and
 * the tests it then did not run count as failed, not skipped: "skipped" means a test chose to skip (with
 * a reason), never that PostgreSQL was down.
 */
import type { Reporter, SerializedError, TestCase, TestModule } from "vitest/node";

/** Skipped by vitest because its file or suite failed before it could run (no skip reason of its own). */
function notRun(test: TestCase, mod: TestModule): boolean {
  const result = test.result();
  if (result.state !== "skipped" || result.note) return false;
  if (mod.state() === "failed") return true;
  for (let parent = test.parent; parent.type === "suite"; parent = parent.parent) {
    if (parent.state() === "failed") return true;
  }
  return false;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    let unrun = 0;
    for (const mod of testModules) {
      let moduleFailures = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") moduleFailures++;
        else if (notRun(test, mod)) unrun++;
        else skipped++;
      }
      if (moduleFailures === 0 && mod.state() === "failed") moduleFailures = 1;
      failed += moduleFailures;
    }
    failed += unhandledErrors.length + unrun;
    if (unrun > 0)
      process.stdout.write(
        `\n${unrun} tests never ran because their file's setup failed: counted as failed.`,
      );
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
