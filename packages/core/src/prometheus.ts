// Placeholder: the Prometheus metrics sink lands with the runtime issue.
export {};
