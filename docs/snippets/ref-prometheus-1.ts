import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import { prometheusSink } from "@soniq/prometheus";
import { Registry } from "prom-client";

const registry = new Registry();
const soniq = new Soniq({
  backend: postgresBackend({ connectionString: process.env.DATABASE_URL! }),
  metrics: prometheusSink({ registry, prefix: "soniq" }),
});
// serve `await registry.metrics()` (content type `registry.contentType`) on your /metrics endpoint
