/**
 * Logging: Soniq takes any pino-compatible logger (`{ debug, info, warn, error }` called as `(obj, msg)`)
 * and is silent by default. A logger that throws never breaks the caller. A Node.js Console (`logger:
 * console`) prints one `msg key=value` line per record instead of an object dump before the message.
 */
import { Console } from "node:console";
import { logLine } from "./log-line.js";

export type LogFn = (obj: Record<string, unknown>, msg: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const noop: LogFn = () => {};

/** The default logger: drops everything. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/** Wraps a user logger so a throwing logger cannot break the worker loop, and adds fixed bindings. */
export function safeLogger(logger: Logger, bindings?: Record<string, unknown>): Logger {
  if (logger === silentLogger) return silentLogger;
  const target = logger instanceof Console ? consoleLines(logger) : logger;
  const wrap =
    (level: keyof Logger): LogFn =>
    (obj, msg) => {
      try {
        target[level](bindings ? { ...bindings, ...obj } : obj, msg);
      } catch {
        // A broken logger must not take the worker down; there is nowhere left to report it.
      }
    };
  return { debug: wrap("debug"), info: wrap("info"), warn: wrap("warn"), error: wrap("error") };
}

/** A Console logs each record as one `msg key=value` line, at the method of the same level. */
function consoleLines(out: Console): Logger {
  return {
    debug: (obj, msg) => out.debug(logLine(obj, msg)),
    info: (obj, msg) => out.info(logLine(obj, msg)),
    warn: (obj, msg) => out.warn(logLine(obj, msg)),
    error: (obj, msg) => out.error(logLine(obj, msg)),
  };
}

export function isLogger(value: unknown): value is Logger {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return ["debug", "info", "warn", "error"].every((k) => typeof v[k] === "function");
}
