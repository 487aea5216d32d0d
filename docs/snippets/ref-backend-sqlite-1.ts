import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: sqliteBackend({ filename: "./soniq.db" }) });
await soniq.setup(); // applies the migrations in drizzle/
