/** The `migrations` facet: create or upgrade the schema, and say what is applied. */

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

export interface MigrationReport extends MigrationStatus {
  /** Migrations this call applied (empty when already up to date). */
  appliedNow: string[];
}

export interface MigrationsFacet {
  /** Create or upgrade the schema. Idempotent (a second call applies nothing); safe across processes. */
  apply(): Promise<MigrationReport>;
  status(): Promise<MigrationStatus>;
}
