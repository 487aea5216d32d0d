/** Soniq on `@soniq/backend-memory`: no storage at all, so it shows the worker's own cost per job. */
import { memoryBackend } from "@soniq/backend-memory";
import { SoniqSession } from "./soniq-session.js";
import type { SystemAdapter } from "./types.js";

export const soniqMemorySystem: SystemAdapter = {
  id: "soniq-memory",
  label: "Soniq memory (contract loop)",
  storage: "memory",
  inProcess: true,
  notes: "INTERIM: @soniq/backend-memory in the worker's process, minimal contract loop",
  async prepare() {},
  async open() {
    return new SoniqSession(memoryBackend(), null);
  },
};
