/**
 * The check every backend's `/testing` builder runs on its `faults` argument (one rule for the three): an object
 * whose only key is `interruptDeadLetterMove`, a function. Anything else is `SONIQ_INVALID_OPTIONS` listing each
 * problem, before a backend is built.
 */
import { SoniqError } from "../common/errors.js";

export function checkFaultHooks(faults: unknown, builder: string): void {
  const problems: string[] = [];
  if (typeof faults !== "object" || faults === null) problems.push("faults must be an object");
  else {
    for (const key of Object.keys(faults)) {
      if (key !== "interruptDeadLetterMove")
        problems.push(`no fault "${key}" (it takes interruptDeadLetterMove)`);
    }
    if (typeof (faults as { interruptDeadLetterMove?: unknown }).interruptDeadLetterMove !== "function") {
      problems.push("interruptDeadLetterMove must be a function");
    }
  }
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid ${builder} faults: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
}
