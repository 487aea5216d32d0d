/**
 * What the workflow cases share (cases/flows.ts, cases/flow-failures.ts): a `Soniq` over the case's backend on a
 * queue of its own, drained with `worker.runOnce()` (which also runs the steps a settle released), and readers of
 * a flow's and its steps' states.
 */
import assert from "node:assert/strict";
import { Soniq, type SoniqError } from "@soniq/core";
import type { CaseContext } from "../types.js";
import { equal } from "./helpers.js";

export type App = Soniq;

export function app(ctx: CaseContext): { soniq: App; queue: string; drain: () => Promise<number> } {
  const queue = ctx.queue("flow");
  const soniq = new Soniq({ backend: ctx.backend, defaultQueue: queue });
  const drain = async () => {
    let total = 0;
    for (;;) {
      const n = await soniq.worker({ queues: [queue], concurrency: 20 }).runOnce();
      total += n;
      if (n === 0) return total;
    }
  };
  return { soniq, queue, drain };
}

export async function invalid(promise: Promise<unknown>, field: string, what: string): Promise<SoniqError> {
  try {
    await promise;
  } catch (err) {
    const e = err as SoniqError;
    equal(e.code, "SONIQ_INVALID_FLOW", `${what}: flows.start must reject with SONIQ_INVALID_FLOW`);
    equal(e.context.field, field, `${what}: context.field names the bad field`);
    return e;
  }
  assert.fail(`${what}: flows.start must reject`);
}

export const stateOf = async (soniq: App, id: string) => (await soniq.flows.get(id))?.state;
export const stepStates = async (soniq: App, id: string) =>
  Object.fromEntries(((await soniq.flows.get(id))?.steps ?? []).map((s) => [s.ref, s.state]));
