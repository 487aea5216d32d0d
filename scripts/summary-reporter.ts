/**
 * Prints one closing line, `Tests: N passed, N failed, N skipped`, after vitest's own report, so CI
 * can read the result. A test file that failed to load or whose hooks failed counts as one failure.
 */
import type { Reporter, SerializedError, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let moduleFailures = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") moduleFailures++;
        else skipped++;
      }
      if (moduleFailures === 0 && mod.state() === "failed") moduleFailures = 1;
      failed += moduleFailures;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
