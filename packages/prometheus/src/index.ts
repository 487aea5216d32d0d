export {
  DEFAULT_DURATION_BUCKETS,
  type PrometheusSink,
  type PrometheusSinkOptions,
  prometheusSink,
} from "./prometheus.js";
