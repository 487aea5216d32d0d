import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";
import { prometheusSink } from "@soniq/prometheus";
import { Registry } from "prom-client";

const registry = new Registry();
const soniq = new Soniq({
  backend: memoryBackend(),
  metrics: prometheusSink({ registry, prefix: "soniq" }),
  logger: {
    debug() {},
    info() {},
    warn: (obj, msg) => console.warn(msg, obj),
    error: (obj, msg) => console.error(msg, obj),
  },
});
// expose `await registry.metrics()` on your /metrics endpoint
await soniq.close();
