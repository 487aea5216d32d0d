import { memoryBackend, memoryInspector } from "@soniq/backend-memory";

export function harness() {
  // #region snippet
  const backend = memoryBackend();
  return { backend, inspector: memoryInspector(backend) };
  // #endregion snippet
}
