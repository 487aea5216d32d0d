import type { ConformanceCase } from "./types.js";

/** Keeps the literal id in the type, so `skip` keys are checked against the real case ids. */
export function defineCase<const Id extends string>(c: ConformanceCase<Id>): ConformanceCase<Id> {
  return c;
}
