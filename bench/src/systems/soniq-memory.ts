/**
 * Soniq on `@soniq/backend-memory`: no storage cost at all, so it shows the worker's own cost per job.
 * Loaded on first use, like the Postgres rows.
 */
import type { SystemAdapter } from "./types.js";

export const soniqMemorySystem: SystemAdapter = {
  id: "soniq-memory",
  label: "Soniq memory (in-process)",
  preload: () => Promise.all([import("@soniq/backend-memory"), import("./soniq-session.js")]),
  storage: "memory",
  inProcess: true,
  manyQueues: true,
  immediateRetries: true,
  queueLimits: true,
  flows: true,
  steps: true,
  notes: "memoryBackend() with default settings; producer and worker in one process",
  async prepare() {},
  async open() {
    const [{ memoryBackend }, { SoniqAppSession }] = await Promise.all([
      import("@soniq/backend-memory"),
      import("./soniq-session.js"),
    ]);
    return new SoniqAppSession(memoryBackend(), null);
  },
};

export const soniqMemoryContractSystem: SystemAdapter = {
  id: "soniq-memory-contract",
  label: "Soniq memory (contract loop)",
  preload: () => Promise.all([import("@soniq/backend-memory"), import("./soniq-session.js")]),
  storage: "memory",
  inProcess: true,
  optional: true,
  manyQueues: true,
  immediateRetries: true,
  notes: "diagnostic: @soniq/backend-memory driven by a minimal loop on the Backend contract",
  async prepare() {},
  async open() {
    const [{ memoryBackend }, { SoniqContractSession }] = await Promise.all([
      import("@soniq/backend-memory"),
      import("./soniq-session.js"),
    ]);
    return new SoniqContractSession(memoryBackend(), null);
  },
};
