/**
 * Versions of a job's arguments (DESIGN.md section 20): args older than the handler's `version` pass through the
 * definition's upcasters in order (n -> n + 1), then the schema. A missing upcaster (an application may drop its
 * oldest versions) or one that throws is an `invalid_arguments` dead letter naming the version step.
 */
import type { Upcasters } from "../app/options.js";
import { checkJson } from "../common/json.js";

export type Upcast = { ok: true; args: unknown } | { ok: false; error: string };

/** `args` of version `from` as version `to` (from < to), or why not. */
export function upcastArgs(
  name: string,
  upcast: Upcasters | undefined,
  args: unknown,
  from: number,
  to: number,
): Upcast {
  let current = args;
  for (let v = from; v < to; v++) {
    const step = upcast?.[v];
    if (step === undefined) {
      return {
        ok: false,
        error: `No upcaster from version ${v} to ${v + 1} of "${name}": the job's args are version ${from}, this handler takes version ${to}.`,
      };
    }
    let next: unknown;
    try {
      next = (step as (args: unknown) => unknown)(current);
    } catch (err) {
      const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      return {
        ok: false,
        error: `The upcaster from version ${v} to ${v + 1} of "${name}" threw: ${message}`,
      };
    }
    if (next instanceof Promise) {
      next.catch(() => {});
      return {
        ok: false,
        error: `The upcaster from version ${v} to ${v + 1} of "${name}" returned a promise; upcasters are synchronous functions of the args.`,
      };
    }
    const json = checkJson(next === undefined ? null : next);
    if (!json.ok) {
      return {
        ok: false,
        error: `The upcaster from version ${v} to ${v + 1} of "${name}" returned args that are not JSON: ${json.problem.problem} at ${json.problem.path}.`,
      };
    }
    current = json.value;
  }
  return { ok: true, args: current };
}
