import { SoniqError } from "@soniq/core/backend";

export interface MemoryBackendOptions {
  /** The backend's clock in epoch milliseconds (due times, heartbeats, expiry, leases). Default `Date.now`. */
  now?: () => number;
  /** Shown in errors and logs. Default `"memory"`. */
  name?: string;
}

export interface ResolvedMemoryBackendOptions {
  readonly now: () => number;
  readonly name: string;
}

// Every key of MemoryBackendOptions (the compiler checks none is missing or extra).
const KEYS = Object.keys({ now: true, name: true } satisfies Record<keyof MemoryBackendOptions, true>);

/** Validate once, report every problem in one error, fill defaults, freeze. */
export function resolveOptions(options: MemoryBackendOptions = {}): ResolvedMemoryBackendOptions {
  if (typeof options !== "object" || options === null) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", "memoryBackend options must be an object.", {
      context: { problems: ["options must be an object"] },
    });
  }
  // A typo (or an option another version had) must not build a backend that silently lacks it.
  const problems = Object.keys(options)
    .filter((key) => !KEYS.includes(key))
    .map((key) => `no option "${key}" (it takes ${KEYS.join(", ")})`);
  if (options.now !== undefined && typeof options.now !== "function") problems.push("now must be a function");
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) {
    problems.push("name must be a non-empty string");
  }
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid memoryBackend options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return Object.freeze({
    now: options.now ?? Date.now,
    name: options.name ?? "memory",
  });
}
