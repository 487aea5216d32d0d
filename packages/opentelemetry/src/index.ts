export { type OpenTelemetryOptions, openTelemetry } from "./open-telemetry.js";
