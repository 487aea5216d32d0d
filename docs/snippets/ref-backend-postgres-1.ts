import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: postgresBackend({ connectionString: process.env.DATABASE_URL! }) });
await soniq.setup(); // applies the migrations (idempotent, safe from several processes at once)
