import { lifecycleCases } from "./lifecycle.js";

/** Every conformance case, in the order they run. */
export const CONFORMANCE_CASES = [...lifecycleCases] as const;

export type ConformanceCaseId = (typeof CONFORMANCE_CASES)[number]["id"];
