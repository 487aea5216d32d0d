/**
 * One readable line for a log record: `msg key=value key=value`. This is what `logger: console` prints
 * (logger.ts adapts a Node.js Console with it), instead of an object dump before every message.
 */

/** A bare word stays bare; anything with spaces, quotes or `=` (or empty) is JSON-quoted. */
const quote = (text: string): string => (/^[^\s"=]+$/.test(text) ? text : JSON.stringify(text));

function formatValue(value: unknown): string {
  if (typeof value === "string") return quote(value);
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return quote(`${value.name}: ${value.message}${typeof code === "string" ? ` (${code})` : ""}`);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "InvalidDate" : value.toISOString();
  if (typeof value === "object" && value !== null) {
    try {
      return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    } catch {
      return quote(String(value)); // a cycle: say what it is rather than fail the log call
    }
  }
  return String(value); // number, boolean, bigint, null, symbol, function
}

/** `msg` followed by each defined field of `obj` as `key=value`, in the record's key order. */
export function logLine(obj: Record<string, unknown>, msg: string): string {
  let line = msg;
  for (const [key, value] of Object.entries(obj)) {
    if (value !== undefined) line += ` ${key}=${formatValue(value)}`;
  }
  return line;
}
