/** The flows facet (being built: this placeholder refuses every call until the engine lands here). */
import { type FlowsFacet, SoniqError } from "@soniq/core/backend";

const notYet = (): Promise<never> =>
  Promise.reject(new SoniqError("SONIQ_INVALID_STATE", "flows are not implemented on this backend yet"));

export function flowsFacet(): FlowsFacet<never> {
  return { start: notYet, get: notYet, list: notYet, cancel: notYet, stepOfJob: notYet, parents: notYet };
}
