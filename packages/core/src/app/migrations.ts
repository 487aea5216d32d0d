/** `soniq.migrations`: what an operator asks about the schema before and after `soniq.setup()`. */
import type { GuardedBackend, MigrationStatus } from "../contract/index.js";
import { noArguments } from "../jobs/queries.js";

export class MigrationService {
  readonly #backend: GuardedBackend<unknown>;

  constructor(backend: GuardedBackend<unknown>) {
    this.#backend = backend;
  }

  /** `{ applied, pending }`: migration names in order. Reads only; `soniq.setup()` applies the pending ones. */
  status(...args: []): Promise<MigrationStatus> {
    try {
      noArguments(args, "migrations.status()", "takes no arguments");
      return this.#backend.migrations.status();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
