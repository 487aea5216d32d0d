/** `soniq.migrations`: what an operator asks about the schema before and after `soniq.setup()`. */
import type { Backend, MigrationStatus } from "../contract/index.js";
import { noArguments } from "../jobs/queries.js";

/** `soniq.migrations`. */
export interface MigrationsApi {
  /** `{ applied, pending }`: migration names in order. Reads only; `soniq.setup()` applies the pending ones. */
  status(): Promise<MigrationStatus>;
}

export function migrationsApi(backend: Backend<unknown>): MigrationsApi {
  return Object.freeze({
    status(...args: []): Promise<MigrationStatus> {
      try {
        noArguments(args, "migrations.status()", "takes no arguments");
        return backend.migrations.status();
      } catch (err) {
        return Promise.reject(err);
      }
    },
  });
}
