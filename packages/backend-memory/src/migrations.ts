/** The migrations facet: the memory backend has no schema, so there is never anything to apply. */
import type { MigrationsFacet } from "@soniq/core/backend";

export function migrationsFacet(): MigrationsFacet {
  return {
    apply: async () => ({ applied: [], pending: [], appliedNow: [] }),
    status: async () => ({ applied: [], pending: [] }),
  };
}
