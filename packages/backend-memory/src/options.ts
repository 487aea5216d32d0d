import { SoniqError } from "@soniq/core/backend";

export interface MemoryBackendOptions {
  /** The backend's clock in epoch milliseconds (due times, heartbeats, expiry, leases). Default `Date.now`. */
  now?: () => number;
  /** Shown in errors and logs. Default `"memory"`. */
  name?: string;
  /**
   * Fault injection for conformance tests; never set it in production.
   * `interruptDeadLetterMove(jobId)` is consulted before each dead-letter move of `runs.settle`; when it
   * returns true the move fails between its two steps (dead-letter row inserted, job not yet deleted):
   * the call rejects with `SONIQ_BACKEND_ERROR` and nothing of it is applied.
   */
  testHooks?: { interruptDeadLetterMove?: (jobId: string) => boolean };
}

export interface ResolvedMemoryBackendOptions {
  readonly now: () => number;
  readonly name: string;
  readonly testHooks: { readonly interruptDeadLetterMove?: (jobId: string) => boolean };
}

/** Validate once, report every problem in one error, fill defaults, freeze. */
export function resolveOptions(options: MemoryBackendOptions = {}): ResolvedMemoryBackendOptions {
  if (typeof options !== "object" || options === null) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", "memoryBackend options must be an object.", {
      context: { problems: ["options must be an object"] },
    });
  }
  const problems: string[] = [];
  if (options.now !== undefined && typeof options.now !== "function") problems.push("now must be a function");
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) {
    problems.push("name must be a non-empty string");
  }
  const hook = options.testHooks?.interruptDeadLetterMove;
  if (hook !== undefined && typeof hook !== "function") {
    problems.push("testHooks.interruptDeadLetterMove must be a function");
  }
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid memoryBackend options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return Object.freeze({
    now: options.now ?? Date.now,
    name: options.name ?? "memory",
    testHooks: Object.freeze(hook === undefined ? {} : { interruptDeadLetterMove: hook }),
  });
}
