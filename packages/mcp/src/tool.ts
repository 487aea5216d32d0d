/**
 * What an MCP tool is here: a name, a description for the agent, a zod input schema (strict: an unknown key
 * is an error, not ignored), whether it writes, and `run`, which gets the parsed input and the session.
 * Tools call the app API only (never `soniq.backend`), and every value they return has passed through the
 * app's `redact`.
 */
import type { Soniq } from "@soniq/core";
import { parsePastInstant } from "@soniq/core/ops";
import * as z from "zod";

/** One client connection: the app instance and who is acting. */
export interface Session {
  readonly soniq: Soniq;
  /** `mcp:<client name>` (from the initialize handshake): the audit actor of every write. */
  actor(): string;
}

export interface ToolSpec<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  /** Changes data: listed and callable only with `--allow-writes`. */
  readonly write: boolean;
  /** A write that deletes (MCP's destructiveHint). */
  readonly destructive?: boolean;
  run(input: z.output<S>, session: Session): Promise<unknown>;
}

/** Declares a tool, keeping `run`'s input typed by its schema. */
export const tool = <S extends z.ZodObject>(spec: ToolSpec<S>): ToolSpec => spec as unknown as ToolSpec;

/** A refusal or a miss the agent should read: the call ends as an MCP tool error with this message. */
export class ToolRefusal extends Error {
  override name = "ToolRefusal";
}

/**
 * An ISO date or a duration ago ("30m", "2h", "7d"), read as the CLI's `--since` reads it (core's
 * `parsePastInstant`); anything else is an input error naming the field.
 */
export const when = z
  .string()
  .describe("an ISO date (2026-12-01T09:00:00Z) or a duration ago (30m, 2h, 7d)")
  .transform((value, ctx) => {
    const date = parsePastInstant(value, Date.now());
    if (date) return date;
    ctx.addIssue({ code: "custom", message: `expected an ISO date or a duration like 2h (got "${value}")` });
    return z.NEVER;
  });

/** A row count: 1 to 1000 (core's largest page), `fallback` when omitted. */
export const limit = (fallback: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(fallback)
    .describe(`at most this many rows (default ${fallback})`);

export const id = (what: string) => z.string().min(1).describe(what);
