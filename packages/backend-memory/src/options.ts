import { SoniqError } from "@soniq/core";

export interface MemoryBackendOptions {
  /** The backend's clock in epoch milliseconds (due times, heartbeats, expiry, leases). Default `Date.now`. */
  now?: () => number;
  /** Shown in errors and logs. Default `"memory"`. */
  name?: string;
  /**
   * Fault injection for conformance tests; never set it in production.
   * `afterDeadLetterInsert` runs between the two steps of `markJobDeadLetter` (dead-letter row
   * inserted, job not yet deleted); when it throws, the move is rolled back and the call rejects.
   */
  testHooks?: { afterDeadLetterInsert?: (jobId: string) => void };
}

export interface ResolvedMemoryBackendOptions {
  readonly now: () => number;
  readonly name: string;
  readonly testHooks: { readonly afterDeadLetterInsert?: (jobId: string) => void };
}

/** Validate once, report every problem in one error, fill defaults, freeze. */
export function resolveOptions(options: MemoryBackendOptions = {}): ResolvedMemoryBackendOptions {
  const problems: string[] = [];
  if (typeof options !== "object" || options === null) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", "memoryBackend options must be an object.", {
      context: { problems: ["options must be an object"] },
    });
  }
  if (options.now !== undefined && typeof options.now !== "function") problems.push("now must be a function");
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) {
    problems.push("name must be a non-empty string");
  }
  const hook = options.testHooks?.afterDeadLetterInsert;
  if (hook !== undefined && typeof hook !== "function") {
    problems.push("testHooks.afterDeadLetterInsert must be a function");
  }
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid memoryBackend options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return Object.freeze({
    now: options.now ?? Date.now,
    name: options.name ?? "memory",
    testHooks: Object.freeze(hook === undefined ? {} : { afterDeadLetterInsert: hook }),
  });
}
