export { type MemoryBackend, memoryBackend } from "./backend.js";
export { type MemoryInspector, memoryInspector } from "./inspector.js";
export type { MemoryBackendOptions } from "./options.js";
