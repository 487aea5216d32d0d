import type { Soniq } from "@soniq/core";
import { expect } from "vitest";

declare const soniq: Soniq;
declare const id: string;

// #region snippet
import { eventually } from "@soniq/testkit";

await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"), { timeoutMs: 2000 });
// #endregion snippet
