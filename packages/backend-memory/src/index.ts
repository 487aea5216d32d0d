export { type MemoryBackend, memoryBackend } from "./backend.js";
export { type MemoryInspector, memoryInspector } from "./internal/inspector.js";
export type { MemoryBackendOptions } from "./options.js";
