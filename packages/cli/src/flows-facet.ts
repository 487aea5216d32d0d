/**
 * The part of `soniq.flows` (DESIGN.md section 15) the CLI reads and writes, typed by what the commands
 * need (the shapes of core's `FlowSummary` and `Flow`). `flowsOf` refuses a core without the facet with a line that says what to upgrade.
 */
import type { Soniq } from "@soniq/core";
import { CliError } from "./errors.js";

export const FLOW_STATES = ["running", "held", "succeeded", "failed", "cancelled"] as const;
export type FlowState = (typeof FLOW_STATES)[number];

export interface FlowStepView {
  ref: string;
  jobId: string;
  jobName: string;
  state: string;
  dependsOn: string[];
  onParentFailure: string;
}

/** A flow's step counts (`open` = not terminal; `failed` = dead-lettered or cancelled). */
export interface FlowCounts {
  total: number;
  open: number;
  done: number;
  failed: number;
  held: number;
}

/** A flow as `flows.list` returns it; `flows.get` adds its steps. */
export interface FlowView {
  id: string;
  name: string | null;
  state: FlowState;
  counts: FlowCounts;
  createdAt: Date;
  finishedAt: Date | null;
  steps?: FlowStepView[];
}

export interface FlowsFacet {
  get(id: string): Promise<FlowView | null>;
  list(filter?: { state?: FlowState; name?: string; limit?: number }): Promise<FlowView[]>;
  cancel(id: string, options?: { actor?: string }): Promise<unknown>;
}

export function flowsOf(soniq: Soniq): FlowsFacet {
  const flows = (soniq as unknown as { flows?: FlowsFacet }).flows;
  if (!flows || typeof flows.get !== "function") {
    throw new CliError(
      "SONIQ_CLI_UNSUPPORTED",
      "this @soniq/core has no flows (soniq.flows): upgrade @soniq/core to a version with workflows.",
    );
  }
  return flows;
}
