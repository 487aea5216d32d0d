import type { Backend } from "@soniq/core";
import { Soniq } from "@soniq/core";

/** `postgres://...`, `memory`, `sqlite:<path>`, or nothing for the embedded default file. */
async function backendFor(url: string | undefined): Promise<Backend<unknown>> {
  if (url?.startsWith("postgres://")) {
    const { postgresBackend } = await import("@soniq/backend-postgres");
    return postgresBackend({ connectionString: url });
  }
  if (url === "memory") {
    const { memoryBackend } = await import("@soniq/backend-memory");
    return memoryBackend();
  }
  const { sqliteBackend } = await import("@soniq/backend-sqlite");
  return sqliteBackend({ filename: url?.replace(/^sqlite:/, "") || "./soniq.db" });
}

const soniq = new Soniq({ backend: await backendFor(process.env.SONIQ_DATABASE_URL) });
await soniq.setup();
console.log(soniq.backend.name, soniq.backend.capabilities.transactionalEnqueue);
// With SONIQ_DATABASE_URL unset it prints (and "memory false" with SONIQ_DATABASE_URL=memory):
// -> sqlite true
await soniq.close();
