export { type MemoryBackend, memoryBackend } from "./backend.js";
export type { MemoryInspector } from "./inspector.js";
export type { MemoryBackendOptions } from "./options.js";
