/**
 * What an MCP tool is here: a name, a description for the agent, a zod input schema (strict: an unknown key
 * is an error, not ignored), whether it writes, and `run`, which gets the parsed input and the session.
 * Tools call the app API only (never `soniq.backend`), and every value they return has passed through the
 * app's `redact`.
 */
import type { Soniq } from "@soniq/core";
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

/** "2h", "7d", "30m", "45s" or "500ms" ago, else an ISO date; anything else is an input error naming the field. */
export const when = z
  .string()
  .describe("an ISO date (2026-12-01T09:00:00Z) or a duration ago (30m, 2h, 7d)")
  .transform((value, ctx) => {
    const m = /^(\d+)\s*(ms|s|m|h|d)$/.exec(value.trim());
    const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
    const date = m
      ? new Date(Date.now() - Number(m[1]) * (units[m[2] as string] as number))
      : new Date(value);
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({
        code: "custom",
        message: `expected an ISO date or a duration like 2h (got "${value}")`,
      });
      return z.NEVER;
    }
    return date;
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

/** The JSON Schema an MCP client is shown for a tool's input. */
export function inputJsonSchema(input: z.ZodObject): Record<string, unknown> {
  const { $schema: _drop, ...schema } = z.toJSONSchema(input, { io: "input" }) as Record<string, unknown>;
  return schema;
}

/** "jobs: limit: Too big: expected number to be <=1000; status: ..." naming every bad field. */
export function inputProblems(toolName: string, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return `invalid input for ${toolName}: ${problems.join("; ")}. Nothing was changed.`;
}
