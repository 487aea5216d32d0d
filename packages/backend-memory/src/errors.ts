import { SoniqError } from "@soniq/core";

export function invalidArgument(message: string, context: Record<string, unknown> = {}): SoniqError {
  return new SoniqError("SONIQ_INVALID_ARGUMENT", message, { context });
}

export function requireNonNegative(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw invalidArgument(`${name} must be a finite number >= 0, got ${String(value)}.`, { [name]: value });
  }
  return value;
}

export function requireString(value: unknown, name: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw invalidArgument(`${name} must be a non-empty string, got ${String(value)}.`, { [name]: value });
  }
  return value;
}

/** Optional `Date`: undefined or null pass through; anything else must be a valid Date. */
export function optionalTime(value: unknown, name: string): number | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw invalidArgument(`${name} must be a valid Date or null.`, { [name]: value });
  }
  return value.getTime();
}
