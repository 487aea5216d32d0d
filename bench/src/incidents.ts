/**
 * Incidents: errors the harness survived but that make the running measurement untrustworthy (a pg
 * connection killed under a pool, a worker's claim that failed, a library's logged error). Each process (the
 * parent, every worker host) keeps its own list; a measurement clears the parent's at its start and reads
 * every process's at its end, and any entry makes it INVALID instead of crashing the bench.
 */
import type { EventEmitter } from "node:events";

const incidents: string[] = [];

/** At most this many are kept (a dead server can raise one per poll). */
const MAX_INCIDENTS = 20;

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

export function recordIncident(where: string, err: unknown): void {
  if (incidents.length < MAX_INCIDENTS) incidents.push(`${where}: ${describe(err)}`);
}

/** Returns the incidents recorded since the last call and forgets them. */
export function takeIncidents(): string[] {
  return incidents.splice(0, incidents.length);
}

/**
 * Gives a pg `Pool` or `Client` an 'error' listener that records an incident. Without one, a connection the
 * server terminates ("terminating connection due to administrator command") is an unhandled 'error' event
 * and takes the whole process down.
 */
export function watchPg<T extends EventEmitter>(emitter: T, where: string): T {
  emitter.on("error", (err: unknown) => recordIncident(where, err));
  return emitter;
}

const CONNECTION_MESSAGES =
  /Connection terminated|terminating connection|server closed the connection|Client has encountered a connection error|ECONNRESET|ECONNREFUSED|EPIPE/;

/**
 * An error from PostgreSQL or the pg driver's connection (a server-side error carries `severity` and a
 * five-character SQLSTATE `code`). Only these are survived when nothing else caught them: any other
 * uncaught exception is a bug of the harness and still stops it.
 */
export function isPgError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { severity, code } = err as { severity?: unknown; code?: unknown };
  if (typeof severity === "string" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return true;
  return CONNECTION_MESSAGES.test(err.message);
}
