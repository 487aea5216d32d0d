/**
 * Which redaction the CLI applies to what it shows, and the line that says so (issue 43). A rule is the app
 * module's own `redact` (--module or SONIQ_MODULE), or field paths for the CLI's own instance from `--redact` or
 * SONIQ_REDACT (comma-separated, checked with core's rules); `--no-redact` asks for raw values on purpose.
 * `soniq mcp` refuses to serve without a rule unless --no-redact (an agent sends what it reads to its model
 * provider); `soniq dashboard` warns off loopback. Paths beside a module are a usage error: the module's
 * instance is built, so the CLI cannot add to or replace its `redact`.
 */
import type { Soniq } from "@soniq/core";
import { redactOptionProblems } from "@soniq/core/ops";
import { isLoopback } from "./dashboard/keys.js";
import { usage } from "./errors.js";

export const REDACT_ENV = "SONIQ_REDACT";

/** What the command line asked for. */
export type RedactRequest =
  | {
      readonly kind: "paths";
      readonly paths: readonly string[];
      readonly source: "--redact" | "SONIQ_REDACT";
    }
  | { readonly kind: "raw" }
  | { readonly kind: "unset" };

/** `password, **.token` as paths: trimmed, empty entries dropped, each checked with core's rules. */
export function parseRedactPaths(text: string, source: "--redact" | "SONIQ_REDACT"): string[] {
  const paths = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (paths.length === 0)
    throw usage(`${source} names no field path. Give paths like password,**.token, or drop it.`);
  const problems = redactOptionProblems(paths);
  if (problems.length > 0) throw usage(`${source}: ${problems.join("; ")}.`);
  return paths;
}

/** The global flag (`--redact <paths>` a string, `--no-redact` false) wins over SONIQ_REDACT. */
export function chooseRedact(flag: string | boolean | undefined, env: NodeJS.ProcessEnv): RedactRequest {
  if (flag === false) return { kind: "raw" };
  if (typeof flag === "string")
    return { kind: "paths", paths: parseRedactPaths(flag, "--redact"), source: "--redact" };
  const fromEnv = env[REDACT_ENV];
  if (fromEnv) return { kind: "paths", paths: parseRedactPaths(fromEnv, REDACT_ENV), source: REDACT_ENV };
  return { kind: "unset" };
}

/** Paths given beside a module: refused, saying which `redact` would apply instead. */
export function redactBesideModule(request: RedactRequest, app: Soniq, specifier: string): Error | null {
  if (request.kind !== "paths") return null;
  return app.options.redact.active
    ? usage(
        `${request.source} is given beside the app module ${specifier}: the module's redact applies; drop --redact (and ${REDACT_ENV}).`,
      )
    : usage(
        `${request.source} is given beside the app module ${specifier}, which sets no redact: the paths apply only to the ` +
          `CLI's own instance. Set redact in the module's new Soniq({ redact: [...] }), or drop --module; else drop --redact (and ${REDACT_ENV}).`,
      );
}

/** Whether a rule applies to `soniq` (the module's own, or paths the CLI gave its instance). */
export const redacting = (soniq: Soniq): boolean => soniq.options.redact.active;

/** The start line: which rule applies. `readers` is who sees raw values without one ("agents read"). */
export function redactionLine(
  request: RedactRequest,
  soniq: Soniq,
  fromModule: boolean,
  readers: string,
): string {
  if (fromModule && redacting(soniq)) return "redacting: the module's redact";
  if (request.kind === "paths") return `redacting paths: ${request.paths.join(", ")}`;
  const raw = `${readers} raw args, results and errors`;
  return request.kind === "raw" ? `no redaction (--no-redact): ${raw}` : `no redaction: ${raw}`;
}

/** The remedies, worded the same for `soniq mcp`'s refusal and the dashboard's warning. */
export const REDACT_REMEDIES =
  `set --redact / ${REDACT_ENV} (e.g. ${REDACT_ENV}=password,**.token), use --module with the app's redact, ` +
  "or pass --no-redact";

/** The dashboard's warning when it listens off loopback with no rule and no --no-redact; null otherwise. */
export function dashboardRedactionWarning(host: string, request: RedactRequest, soniq: Soniq): string | null {
  if (isLoopback(host) || redacting(soniq) || request.kind === "raw") return null;
  return (
    `warning: the dashboard on ${host} shows raw args, results and errors to everyone who reaches it: ` +
    `${REDACT_REMEDIES} to say raw values are meant.`
  );
}
