export { type MemoryBackend, memoryBackend } from "./backend.js";
export type { MemoryBackendOptions } from "./options.js";
